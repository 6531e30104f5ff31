// switchyard token …: API tokens with roles (viewer, operator, admin).
import type { Command } from 'commander';
import { MAX_EXPIRY_MS } from '../../core/access/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, note, printTable, say } from '../output.js';
import { durationIn } from '../parse.js';

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
    .option(
      '--expires-in <duration>',
      'refuse the token after this long, 1m to 10y: 12h, 30d, 1y (default: never)',
      durationIn(60_000, MAX_EXPIRY_MS, '--expires-in must be a duration from 1m to 10y, e.g. 30d'),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard token create --name ci --role operator\n  switchyard token create --name alice --role viewer --expires-in 30d',
    )
    .action(async (options: { name: string; role: string; expiresIn?: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const created = await backend.tokens.create(options.name, options.role, {
          ...(options.expiresIn !== undefined ? { expiresInMs: options.expiresIn } : {}),
        });
        emit(config.json, created, () => {
          // Only the token on stdout: `token create … > file` makes a token file.
          say(created.token);
          note(`(token ${created.id}, ${created.role}; it is not shown again)`);
        });
      }),
    );
  token
    .command('list')
    .description('all tokens (without their secrets)')
    .addHelpText('after', '\nExample:\n  switchyard token list')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const tokens = await backend.tokens.list();
        emit(config.json, tokens, () =>
          printTable(
            ['ID', 'NAME', 'ROLE', 'CREATED', 'BY', 'EXPIRES', 'LAST USED'],
            tokens.map((item) => [
              item.id,
              item.name,
              item.role,
              ago(item.createdAt),
              item.createdBy,
              expiry(item.expiresAt),
              ago(item.lastUsedAt) ?? 'never',
            ]),
          ),
        );
      }),
    );
  token
    .command('revoke <idOrName>')
    .description('revoke a token at once')
    .addHelpText('after', '\nExample:\n  switchyard token revoke ci')
    .action(async (idOrName: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const revoked = await backend.tokens.revoke(idOrName);
        emit(config.json, { id: revoked.id, name: revoked.name, revoked: true }, () =>
          say(`revoked token ${revoked.name} (${revoked.id})`),
        );
      }),
    );
}

/** "in 29d", "expired 2h ago", or "never". */
function expiry(expiresAt: string | undefined): string {
  if (!expiresAt) return 'never';
  const relative = ago(expiresAt)!;
  return Date.parse(expiresAt) <= Date.now() ? `expired ${relative}` : relative;
}
