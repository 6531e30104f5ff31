// switchyard schedule …: recurring inspections (a plugin over projects, on an
// interval or a cron pattern), kept by the scheduler as BullMQ job schedulers.
import type { Command } from 'commander';
import ms from 'ms';
import { withBackend } from '../command-context.js';
import { ago, emit, printTable, say } from '../output.js';
import { cronPattern, durationFrom } from '../parse.js';

export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('recurring inspections')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard schedule add fixture-inspector --all --cron "0 3 * * *"\n  switchyard schedule list',
    );
  schedule
    .command('add <plugin> [projects...]')
    .description('inspect the named projects (or --all trusted ones) on an interval or a cron pattern')
    .option('--all', 'every trusted project at the time it runs')
    .option(
      '--every <duration>',
      'interval, at least 1s: 30s, 15m, 2h (a bare number is milliseconds); the first batch starts at once',
      durationFrom('--every', 1_000),
    )
    .option('--cron <pattern>', 'cron pattern, e.g. "0 3 * * *"', cronPattern('--cron'))
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard schedule add fixture-inspector --all --cron "0 3 * * *"\n  switchyard schedule add fixture-inspector shop blog --every 1h',
    )
    .action(
      async (
        pluginId: string,
        projects: string[],
        options: { all?: boolean; every?: number; cron?: string },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const created = await backend.schedules.add({
            pluginId,
            projects: options.all ? 'all' : projects,
            ...(options.every ? { everyMs: options.every } : {}),
            ...(options.cron ? { cron: options.cron } : {}),
          });
          emit(config.json, created, () => say(`schedule ${created.id} added`));
        }),
    );
  schedule
    .command('list')
    .description('all recurring inspections')
    .addHelpText('after', '\nExample:\n  switchyard schedule list')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const schedules = await backend.schedules.list();
        emit(config.json, schedules, () =>
          printTable(
            ['ID', 'PLUGIN', 'PROJECTS', 'WHEN', 'BY', 'CREATED'],
            schedules.map((item) => [
              item.id,
              item.pluginId,
              item.projects === 'all' ? 'all' : item.projects.join(','),
              item.cron ?? `every ${ms(item.everyMs!)}`,
              item.createdBy,
              ago(item.createdAt),
            ]),
          ),
        );
      }),
    );
  schedule
    .command('remove <id>')
    .description('stop a recurring inspection')
    .addHelpText('after', '\nExample:\n  switchyard schedule remove sched_1a2b3c4d')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const removed = await backend.schedules.remove(id);
        emit(config.json, removed, () => say(`removed ${id}`));
      }),
    );
}
