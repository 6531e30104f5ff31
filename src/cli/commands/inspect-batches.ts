// switchyard inspect / batch show / batch list: inspection batches (docs/CLI.md
// "Work"); batch cancel, retry, diff and export are in batch-commands.ts.
import type { Command } from 'commander';
import {
  BATCH_STATES,
  checkPriority,
  isBatchOver,
  withoutResults,
  type BatchState,
} from '../../core/work/batches/index.js';
import { InvalidInputError } from '../../core/platform/index.js';
import { checkLabels } from '../../core/projects/index.js';
import { MAX_PAGE_LIMIT } from '../../core/redis/index.js';
import { withBackend } from '../command-context.js';
import { REF_HELP, batchIdOf, withRefScope, type RefScope } from '../work-refs.js';
import { BATCH_RESULTS_LEGEND, ago, batchResults, emit, printJson, printTable, say } from '../output.js';
import { oneOf, positiveInt } from '../parse.js';
import { registerBatchControlCommands } from './batch-commands.js';
import {
  batchDocument,
  failUnlessAllSucceeded,
  finishBatch,
  followWithProgress,
  printBatchResults,
} from './work-output.js';

/** `batch show --status`: the outcomes a batch's results hold (pending projects have none yet). */
const SHOWN_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;

export function registerInspectCommands(program: Command): void {
  program
    .command('inspect <plugin> [projects...]')
    .description(
      'one batch of inspections: the named projects, --all trusted projects, or those with --label',
    )
    .option('--all', 'every trusted project')
    .option('--label <label>', 'every project with this label (chosen when the batch is created)')
    .option('--no-wait', 'print the batch at once instead of following it')
    .option(
      '--priority <class>',
      'high, normal (default) or low: its class in the fair queue (high: admin tokens only)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard inspect fixture-inspector --all\n  switchyard inspect fixture-inspector shop blog --json\n  switchyard inspect fixture-inspector --label web',
    )
    .action(
      async (
        pluginId: string,
        projects: string[],
        options: { all?: boolean; label?: string; wait: boolean; priority?: string },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const ways = [projects.length > 0, options.all === true, options.label !== undefined];
          if (ways.filter(Boolean).length > 1)
            throw new InvalidInputError('name projects, or use --all or --label: only one of them');
          if (!ways.some(Boolean))
            throw new InvalidInputError('name at least one project, or use --all or --label <label>');
          const selection =
            options.label !== undefined
              ? { label: checkLabels([options.label])[0]! }
              : options.all
                ? 'all'
                : projects;
          const priority =
            options.priority === undefined ? undefined : checkPriority(options.priority, undefined);
          const batch = await backend.work.createBatch(pluginId, selection, priority);
          await finishBatch(backend.work, batch, config.json, options.wait);
        }),
    );

  const batch = program
    .command('batch')
    .description('inspection batches')
    .addHelpText('after', '\nExamples:\n  switchyard batch list\n  switchyard batch show <batchId> --json');
  withRefScope(
    batch
      .command('show <batch...>')
      .description(
        'counts so far (pending too) and per-project results, each as soon as its call ended; <batch> or <plugin> <batch>',
      )
      .option('--watch', 'follow it live until it ends; exit 1 if an inspection failed, as inspect does')
      .option(
        '--status <status>',
        `only the projects with this outcome: ${SHOWN_STATUSES.join(', ')} (the counts stay the batch's)`,
        oneOf('--status', SHOWN_STATUSES),
      ),
    'batch',
  )
    .addHelpText(
      'after',
      `\n${REF_HELP} After a plugin, latest and latest~N are that plugin's (as batch diff).\n\nExamples:\n  switchyard batch show 1f2e9a07 --json\n  switchyard batch show fixture-inspector latest --status failed\n  switchyard batch show latest --plugin fixture-inspector --watch`,
    )
    .action(
      async (
        refs: string[],
        options: { watch?: boolean; status?: (typeof SHOWN_STATUSES)[number] } & RefScope,
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          if (refs.length > 2)
            throw new InvalidInputError('batch show takes <batch> or <plugin> <batch> (see --help)');
          const [first, second] = refs as [string, string | undefined];
          if (second !== undefined && options.plugin !== undefined && options.plugin !== first)
            throw new InvalidInputError(
              `--plugin ${options.plugin} and the plugin ${first} differ: give one`,
            );
          const scope = second === undefined ? options : { plugin: first };
          let view = await backend.work.getBatch(await batchIdOf(backend, second ?? first, scope));
          if (options.watch && !isBatchOver(view))
            view = await followWithProgress(backend.work, view, config.json);
          const shown =
            options.status === undefined
              ? view
              : {
                  ...view,
                  results: (view.results ?? []).filter((outcome) => outcome.status === options.status),
                };
          emit(config.json, batchDocument(shown), () => printBatchResults(shown));
          // A script can `inspect --no-wait`, then `batch show --watch` for the same status.
          if (options.watch) failUnlessAllSucceeded(view);
        }),
    );
  batch
    .command('list')
    .description('the newest batches')
    .option(
      '--state <state>',
      `only batches in this state: ${BATCH_STATES.join(', ')}`,
      oneOf('--state', BATCH_STATES),
    )
    .option('--plugin <id>', "only this plugin's batches")
    .option('--limit <n>', 'how many', positiveInt('--limit'), 20)
    .addHelpText('after', '\nExample:\n  switchyard batch list --state failed --plugin fixture-inspector')
    .action(async (options: { state?: BatchState; plugin?: string; limit: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const { items: batches } = await backend.work.listBatches({
          limit: Math.min(options.limit, MAX_PAGE_LIMIT),
          ...(options.state ? { state: options.state } : {}),
          ...(options.plugin ? { pluginId: options.plugin } : {}),
        });
        if (config.json) return printJson(batches.map(withoutResults));
        printTable(
          ['BATCH', 'PLUGIN', 'STATE', 'RESULTS', 'CREATED'],
          batches.map((item) => [
            item.batchId,
            item.pluginId,
            item.state,
            batchResults(item),
            ago(item.createdAt),
          ]),
        );
        if (batches.length > 0) say(BATCH_RESULTS_LEGEND);
      }),
    );
  registerBatchControlCommands(batch);
}
