// switchyard schedule …: recurring inspections (a plugin over projects, on an
// interval or a cron pattern, under a unique name), kept by the scheduler as
// BullMQ job schedulers; paused, resumed and edited by id or name.
import type { Command } from 'commander';
import ms from 'ms';
import { InvalidInputError } from '../../core/platform/index.js';
import { checkPriority } from '../../core/work/batches/index.js';
import { checkLabels } from '../../core/projects/index.js';
import type { ScheduleChanges, ScheduleProjects, ScheduleView } from '../../core/work/upkeep/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, printTable, say } from '../output.js';
import { cronPattern, durationFrom } from '../parse.js';

const EVERY_HELP =
  'interval: 30s, 15m, 2h (a bare number is milliseconds), at least the host minimum (1m unless SWITCHYARD_SCHEDULE_MIN_INTERVAL says otherwise); the first batch starts at once';
const CRON_HELP = 'cron pattern, e.g. "0 3 * * *"; it may not run more often than the host minimum';
const NAME_HELP = 'a unique name, usable wherever an id is (default: <plugin>-<project>, numbered if taken)';
const PRIORITY_HELP =
  "high, normal (default) or low: its batches' class in the fair queue (high: admin tokens only)";

/** --priority checked here (the role rule is the api's): undefined when not given. */
const priorityOf = (value: string | undefined) =>
  value === undefined ? {} : { priority: checkPriority(value, undefined) };

export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('recurring inspections')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard schedule add fixture-inspector --all --cron "0 3 * * *" --name nightly\n  switchyard schedule list\n  switchyard schedule pause nightly',
    );
  schedule
    .command('add <plugin> [projects...]')
    .description(
      'inspect the named projects (or --all trusted ones, or those with --label) on an interval or a cron pattern',
    )
    .option('--all', 'every trusted project at the time it runs')
    .option('--label <label>', 'every project with this label at the time it runs')
    .option('--every <duration>', EVERY_HELP, durationFrom('--every', 0))
    .option('--cron <pattern>', CRON_HELP, cronPattern('--cron'))
    .option('--name <name>', NAME_HELP)
    .option('--priority <class>', PRIORITY_HELP)
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard schedule add fixture-inspector --all --cron "0 3 * * *"\n  switchyard schedule add go-inspector --label go --cron "0 2 * * *" --name go-nightly\n  switchyard schedule add fixture-inspector shop blog --every 1h --name shop-hourly',
    )
    .action(
      async (
        pluginId: string,
        projects: string[],
        options: {
          all?: boolean;
          label?: string;
          every?: number;
          cron?: string;
          name?: string;
          priority?: string;
        },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const created = await backend.schedules.add({
            pluginId,
            projects: selectionOf(projects, options) ?? projects,
            ...(options.every !== undefined ? { everyMs: options.every } : {}),
            ...(options.cron ? { cron: options.cron } : {}),
            ...(options.name ? { name: options.name } : {}),
            ...priorityOf(options.priority),
          });
          emit(config.json, created, () => say(`schedule ${created.id} added (name ${created.name})`));
        }),
    );
  schedule
    .command('list')
    .description('all recurring inspections, with their next run and what their last run did')
    .addHelpText('after', '\nExample:\n  switchyard schedule list')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const schedules = await backend.schedules.list();
        emit(config.json, schedules, () =>
          printTable(
            ['ID', 'NAME', 'PLUGIN', 'PROJECTS', 'WHEN', 'NEXT RUN', 'LAST RUN', 'BY'],
            schedules.map((item) => [
              item.id,
              item.name,
              item.pluginId,
              projectsText(item.projects),
              `${item.pausedAt ? 'paused: ' : ''}${item.cron ?? `every ${ms(item.everyMs!)}`}${item.priority ? ` (${item.priority})` : ''}`,
              item.pausedAt ? '-' : (ago(item.nextRunAt) ?? '-'),
              lastRunText(item),
              item.createdBy,
            ]),
          ),
        );
      }),
    );
  schedule
    .command('edit <idOrName> [projects...]')
    .description('change the projects, the interval or cron pattern, or the name of a schedule')
    .option('--all', 'every trusted project at the time it runs')
    .option('--label <label>', 'every project with this label at the time it runs')
    .option('--every <duration>', EVERY_HELP, durationFrom('--every', 0))
    .option('--cron <pattern>', CRON_HELP, cronPattern('--cron'))
    .option('--name <name>', 'a new unique name')
    .option('--priority <class>', PRIORITY_HELP)
    .addHelpText(
      'after',
      '\nAn interval replaces a cron pattern and the other way round; --priority normal removes a class; what is not given stays.\n\nExample:\n  switchyard schedule edit nightly --cron "0 4 * * *"',
    )
    .action(
      async (
        idOrName: string,
        projects: string[],
        options: {
          all?: boolean;
          label?: string;
          every?: number;
          cron?: string;
          name?: string;
          priority?: string;
        },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const selection = selectionOf(projects, options);
          const changes: ScheduleChanges = {
            ...(selection ? { projects: selection } : {}),
            ...(options.every !== undefined ? { everyMs: options.every } : {}),
            ...(options.cron ? { cron: options.cron } : {}),
            ...(options.name ? { name: options.name } : {}),
            ...priorityOf(options.priority),
          };
          const edited = await backend.schedules.edit(idOrName, changes);
          emit(config.json, edited, () => say(`schedule ${edited.id} (${edited.name}) changed`));
        }),
    );
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    schedule
      .command(`${verb} <idOrName>`)
      .description(
        paused
          ? 'pause a schedule: no run starts until it is resumed (batches already running go on)'
          : 'resume a paused schedule',
      )
      .addHelpText('after', `\nExample:\n  switchyard schedule ${verb} nightly`)
      .action(async (idOrName: string, _options, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const changed = await backend.schedules.setPaused(idOrName, paused);
          emit(config.json, changed, () =>
            say(`schedule ${changed.id} (${changed.name}) ${paused ? 'paused' : 'resumed'}`),
          );
        }),
      );
  }
  schedule
    .command('remove <idOrName>')
    .description('stop a recurring inspection; its batch still running is cancelled with it')
    .addHelpText('after', '\nExample:\n  switchyard schedule remove sched_1a2b3c4d')
    .action(async (idOrName: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const removed = await backend.schedules.remove(idOrName);
        emit(config.json, removed, () => {
          say(`removed ${removed.id}`);
          for (const batchId of removed.cancelledBatches) say(`cancelled its running batch ${batchId}`);
        });
      }),
    );
}

/** Projects named, --all or --label (only one of them): the selection; undefined when none is given. */
function selectionOf(
  projects: string[],
  options: { all?: boolean; label?: string },
): ScheduleProjects | undefined {
  const ways = [projects.length > 0, options.all === true, options.label !== undefined];
  if (ways.filter(Boolean).length > 1)
    throw new InvalidInputError('name projects, or use --all or --label: only one of them');
  if (options.label !== undefined) return { label: checkLabels([options.label])[0]! };
  if (options.all) return 'all';
  return projects.length > 0 ? projects : undefined;
}

/** `schedule list`'s PROJECTS: all, label:<label>, or the ids. */
function projectsText(projects: ScheduleProjects): string {
  if (projects === 'all') return 'all';
  return Array.isArray(projects) ? projects.join(',') : `label:${projects.label}`;
}

/** `schedule list`'s LAST RUN: when, then the batch and its counts, the skip, or the error. */
export function lastRunText(item: ScheduleView): string {
  const run = item.lastRun;
  if (!run) return '-';
  const when = ago(run.at) ?? run.at;
  switch (run.outcome) {
    case 'skipped': {
      const times = (run.skips ?? 1) > 1 ? ` ${run.skips} times since ${ago(run.skippingSince)}` : '';
      return `${when}: skipped${times}: previous batch running (${run.batchId})`;
    }
    case 'failed':
      return `${when}: failed: ${run.error?.code ?? 'ERROR'} ${run.error?.message ?? ''}`.trimEnd();
    case 'started': {
      const batch = run.batch;
      if (!batch) return `${when}: ${run.batchId} (gone)`;
      return `${when}: ${run.batchId} ${batch.state} (${batch.succeeded} succeeded, ${batch.failed} failed, ${batch.cancelled} cancelled of ${batch.total})`;
    }
  }
}
