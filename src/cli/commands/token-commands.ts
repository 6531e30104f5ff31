// switchyard token …: API tokens with roles (viewer, operator, admin), and
// switchyard team …: the tokens' teams and their weights in the fair share.
import type { Command } from 'commander';
import { MAX_EXPIRY_MS } from '../../core/access/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, note, printTable, say } from '../output.js';
import { durationIn, positiveInt } from '../parse.js';

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
    .option('--team <team>', 'its team in the fair share of the workers (team set gives a team its weight)')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard token create --name ci --role operator\n  switchyard token create --name alice --role viewer --expires-in 30d\n  switchyard token create --name nightly --role operator --team builds',
    )
    .action(
      async (options: { name: string; role: string; expiresIn?: number; team?: string }, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const created = await backend.tokens.create(options.name, options.role, {
            ...(options.expiresIn !== undefined ? { expiresInMs: options.expiresIn } : {}),
            ...(options.team !== undefined ? { team: options.team } : {}),
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

  // Teams share the workers by weight (docs/adr/0010-fair-share-inspections.md); a token joins one at creation.
  const team = program
    .command('team')
    .description('teams in the fair share of the workers: their weights (default 1) and tokens')
    .addHelpText('after', '\nExamples:\n  switchyard team set builds --weight 3\n  switchyard team list');
  team
    .command('set <team>')
    .description("set a team's weight (admin): its calls against a weight-1 team's, when both wait")
    .requiredOption('--weight <n>', 'a whole number from 1 to 1000', positiveInt('--weight'))
    .addHelpText('after', '\nExample:\n  switchyard team set builds --weight 3')
    .action(async (name: string, options: { weight: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const set = await backend.tokens.setTeam(name, options.weight);
        emit(config.json, set, () => say(`team ${set.team}: weight ${set.weight}`));
      }),
    );
  team
    .command('list')
    .description('teams named by a token or given a weight')
    .addHelpText('after', '\nExample:\n  switchyard team list')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const teams = await backend.tokens.teams();
        emit(config.json, teams, () =>
          printTable(
            ['TEAM', 'WEIGHT', 'TOKENS'],
            teams.map((item) => [item.team, String(item.weight), item.tokens.join(', ')]),
          ),
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
