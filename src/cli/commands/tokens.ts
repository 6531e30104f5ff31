// switchyard token …: API tokens with roles (viewer, operator, admin).
import type { Command } from 'commander';
import { withRuntime } from '../context.js';
import { ago, emit, printTable, say } from '../output.js';

export function registerTokenCommands(program: Command): void {
  const token = program
    .command('token')
    .description('API tokens for the HTTP API and web UI')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard token create --name ci --role operator\n  switchyard token list',
    );
  token
    .command('create')
    .description('create a token (printed once; only its hash is stored)')
    .requiredOption('--name <name>', 'who or what uses it (recorded as the actor in the audit)')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .addHelpText('after', '\nExample:\n  switchyard token create --name ci --role operator')
    .action(async (options: { name: string; role: string }, command: Command) =>
      withRuntime(command, async ({ config, runtime, actor }) => {
        const created = await runtime.tokens.create(options.name, options.role, actor);
        emit(config.json, created, () => {
          say(created.token);
          say(`(token ${created.id}, ${created.role}; it is not shown again)`);
        });
      }),
    );
  token
    .command('list')
    .description('all tokens (without their secrets)')
    .addHelpText('after', '\nExample:\n  switchyard token list')
    .action(async (_options, command: Command) =>
      withRuntime(command, async ({ config, runtime }) => {
        const tokens = await runtime.tokens.list();
        emit(config.json, tokens, () =>
          printTable(
            ['ID', 'NAME', 'ROLE', 'CREATED', 'BY'],
            tokens.map((item) => [item.id, item.name, item.role, ago(item.createdAt), item.createdBy]),
          ),
        );
      }),
    );
  token
    .command('revoke <idOrName>')
    .description('revoke a token at once')
    .addHelpText('after', '\nExample:\n  switchyard token revoke ci')
    .action(async (idOrName: string, _options, command: Command) =>
      withRuntime(command, async ({ config, runtime, actor }) => {
        const revoked = await runtime.tokens.revoke(idOrName, actor);
        emit(config.json, { id: revoked.id, name: revoked.name, revoked: true }, () =>
          say(`revoked token ${revoked.name} (${revoked.id})`),
        );
      }),
    );
}
