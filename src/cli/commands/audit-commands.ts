// switchyard audit: who trusted, enabled, ran or cancelled what (docs/CLI.md).
import type { Command } from 'commander';
import { MAX_PAGE_LIMIT } from '../../core/redis/index.js';
import { withBackend } from '../command-context.js';
import { ago, printJson, printTable } from '../output.js';
import { positiveInt, sinceFrom } from '../parse.js';

export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('newest audit entries: who trusted, enabled, ran or cancelled what')
    .option('--limit <n>', 'how many', positiveInt('--limit'), 50)
    .option('--actor <actor>', 'only this actor (a local user, token:<name>, scheduler:<id>, …)')
    .option(
      '--action <action>',
      'only this action, or this kind (plugin or plugin. → every plugin decision; schedule is not scheduler)',
    )
    .option('--target <id>', 'only entries about this plugin, project, batch or operation')
    .option(
      '--since <duration|date>',
      'only entries newer than this: a duration (30s, 15m, 2h, 30d) or a date or time (2026-11-01, 2026-11-01T09:30Z)',
      sinceFrom('--since'),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard audit --action batch. --since 2h\n  switchyard audit --since 2026-11-01 --json',
    )
    .action(
      async (
        options: { limit: number; actor?: string; action?: string; target?: string; since?: number },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const { items: entries } = await backend.audit({
            limit: Math.min(options.limit, MAX_PAGE_LIMIT),
            ...(options.actor ? { actor: options.actor } : {}),
            ...(options.action ? { action: options.action } : {}),
            ...(options.target ? { target: options.target } : {}),
            ...(options.since ? { since: options.since } : {}),
          });
          if (config.json) return printJson(entries);
          printTable(
            ['AT', 'ACTOR', 'ACTION', 'TARGET', 'DETAIL'],
            entries.map((entry) => [
              ago(entry.at),
              entry.actor,
              entry.action,
              entry.target,
              JSON.stringify(entry.detail),
            ]),
          );
        }),
    );
}
