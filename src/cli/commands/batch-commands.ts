// switchyard batch cancel / retry / diff / export (CLI.md "Work"): steering a
// batch after it was queued and comparing its results with another's.
import { once } from 'node:events';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import {
  EXPORT_FORMATS,
  isExportFormat,
  type ExportFormat,
  hasDifferences,
  type BatchDiff,
  type BatchView,
} from '../../core/work/batches/index.js';
import { InvalidInputError, NotFoundError } from '../../core/platform/index.js';
import { latestOffset } from '../../core/redis/index.js';
import type { Backend } from '../backend.js';
import { REF_HELP, batchIdOf, withRefScope, type RefScope } from '../work-refs.js';
import { KEEP_PER_PLUGIN, withoutResults } from '../../core/work/batches/index.js';
import { withBackend } from '../command-context.js';
import { emit, escapeControlKeepingLines, say } from '../output.js';
import { oneOf } from '../parse.js';
import { WorkFailed, finishBatch } from './work-output.js';

function cancelledLine(view: BatchView): string {
  return `${view.batchId}: ${view.state} (${view.succeeded} succeeded, ${view.failed} failed, ${view.cancelled} cancelled of ${view.total})`;
}

export function registerBatchControlCommands(batch: Command): void {
  withRefScope(batch.command('cancel [batch]'), 'batch')
    .description(
      'cancel: queued inspections never start, running ones are killed; idempotent. Or in bulk: every running batch of a schedule (--schedule), or every running batch (--state running --yes)',
    )
    .option('--schedule <idOrName>', 'every running batch this schedule started')
    .option(
      '--state <state>',
      'every batch in this state (only running)',
      oneOf('--state', ['running'] as const),
    )
    .option('--yes', "confirm --state running without --schedule: it cancels everyone's running batches")
    .addHelpText(
      'after',
      `\n${REF_HELP}\n\nExamples:\n  switchyard batch cancel 1f2e9a07\n  switchyard batch cancel --schedule nightly\n  switchyard batch cancel --state running --yes`,
    )
    .action(
      async (
        batchId: string | undefined,
        options: { schedule?: string; state?: 'running'; yes?: boolean } & RefScope,
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const bulk = options.schedule !== undefined || options.state !== undefined;
          if (bulk === (batchId !== undefined))
            throw new InvalidInputError(
              'name one batch, or cancel in bulk with --schedule <id|name> or --state running',
            );
          if (!bulk) {
            const view = await backend.work.cancelBatch(await batchIdOf(backend, batchId!, options));
            emit(config.json, withoutResults(view), () => say(cancelledLine(view)));
            return;
          }
          if (options.schedule === undefined && !options.yes)
            throw new InvalidInputError(
              'this cancels every running batch, whoever started it; confirm with --yes: switchyard batch cancel --state running --yes',
            );
          const { cancelled } = await backend.work.cancelBatches(
            options.schedule !== undefined ? { schedule: options.schedule } : {},
          );
          emit(config.json, { cancelled: cancelled.map(withoutResults) }, () => {
            say(`cancelled ${cancelled.length} running batch${cancelled.length === 1 ? '' : 'es'}`);
            for (const view of cancelled) say(cancelledLine(view));
          });
        }),
    );

  withRefScope(
    batch
      .command('retry <batch>')
      .description('a new batch over the same plugin and projects; waits and prints like inspect')
      .option('--failed', 'only the projects that failed or were cancelled')
      .option('--no-wait', 'print the new batch at once instead of following it'),
    'batch',
  )
    .addHelpText(
      'after',
      `\n${REF_HELP}\n\nExample:\n  switchyard batch retry latest --plugin fixture-inspector --failed`,
    )
    .action(async (ref: string, options: { failed?: boolean; wait: boolean } & RefScope, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const batchId = await batchIdOf(backend, ref, options);
        const retry = await backend.work.retryBatch(batchId, { failedOnly: options.failed === true });
        await finishBatch(backend.work, retry, config.json, options.wait);
      }),
    );

  batch
    .command('diff [refs...]')
    .description(
      'what changed from batch A to batch B: facts added, removed, changed; status changes. Forms: <A> <B>, <plugin> <B> (B against the batch before it), <plugin> <A> <B>, --previous <B>',
    )
    .option('--previous <batch>', 'compare this batch with the batch of its plugin before it')
    .option('--exit-code', 'exit 1 when there is any difference (as git diff --exit-code)')
    .addHelpText(
      'after',
      `\nOnly projects with a difference are listed. Retention keeps the newest ${KEEP_PER_PLUGIN} finished batches of each plugin however old, so there is always one to compare with.\n${REF_HELP} After a plugin, latest and latest~N are that plugin's.\n\nExamples:\n  switchyard batch diff fixture-inspector latest\n  switchyard batch diff fixture-inspector latest~7 latest\n  switchyard batch diff --previous 1f2e9a07 --exit-code\n  switchyard batch diff 0c4d2b11 1f2e9a07`,
    )
    .action(async (refs: string[], options: { previous?: string; exitCode?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const [from, to] = await diffEnds(backend, refs, options.previous);
        const diff = await backend.work.diffBatches(from, to);
        emit(config.json, diff, () => printDiff(diff));
        if (options.exitCode && hasDifferences(diff)) throw new WorkFailed('');
      }),
    );

  withRefScope(
    batch
      .command('export <batch>')
      .description('the results on stdout, streamed: jsonl (one line per project) or csv (one row per fact)')
      .option(
        '--format <format>',
        `${EXPORT_FORMATS.join(' or ')} (default jsonl: every field of every result)`,
        exportFormat,
        'jsonl' as ExportFormat,
      ),
    'batch',
  )
    .addHelpText(
      'after',
      `\n${REF_HELP}\n\nExample:\n  switchyard batch export latest --plugin fixture-inspector --format csv > results.csv`,
    )
    .action(async (ref: string, options: { format: ExportFormat } & RefScope, command: Command) =>
      withBackend(command, async ({ backend }) => {
        const onTerminal = process.stdout.isTTY === true;
        const batchId = await batchIdOf(backend, ref, options);
        for await (const chunk of await backend.work.exportBatch(batchId, options.format)) {
          if (!process.stdout.write(exportedText(chunk, onTerminal))) await once(process.stdout, 'drain');
        }
      }),
    );
}

/**
 * The two batches a `batch diff` compares, from its forms: `--previous B`;
 * `A B`; `<plugin> B` (B against the batch of that plugin before it);
 * `<plugin> A B`. A first word that is not a batch reference is a plugin.
 */
async function diffEnds(
  backend: Backend,
  refs: string[],
  previous: string | undefined,
): Promise<[string, string]> {
  const againstPrevious = async (ref: string, scope: RefScope) => {
    const to = await batchIdOf(backend, ref, scope);
    const from = await backend.work.previousBatch(to);
    if (!from)
      throw new NotFoundError(
        `${to} is the oldest kept batch of its plugin: there is none before it to compare with`,
      );
    return [from, to] as [string, string];
  };
  if (previous !== undefined) {
    if (refs.length > 0)
      throw new InvalidInputError('--previous takes one batch: give no other batch with it');
    return againstPrevious(previous, {});
  }
  const [first, second, third] = refs;
  if (first === undefined || second === undefined || refs.length > 3)
    throw new InvalidInputError(
      'batch diff takes <A> <B>, <plugin> <B>, <plugin> <A> <B> or --previous <B> (see --help)',
    );
  const pluginFirst = !looksLikeBatchRef(first);
  if (!pluginFirst && third !== undefined)
    throw new InvalidInputError(`three words need a plugin first: ${JSON.stringify(first)} names a batch`);
  if (pluginFirst && third === undefined) return againstPrevious(second, { plugin: first });
  const scope = pluginFirst ? { plugin: first } : {};
  const [a, b] = pluginFirst ? [second, third!] : [first, second];
  return [await batchIdOf(backend, a, scope), await batchIdOf(backend, b, scope)];
}

/** latest, latest~N, batch_…, or hex digits (with dashes): what id-refs.ts resolves as a batch. */
function looksLikeBatchRef(word: string): boolean {
  return latestOffset(word) !== undefined || word.startsWith('batch_') || /^[0-9a-f-]+$/i.test(word);
}

/**
 * An export's text as written to stdout. Piped or redirected it is data: the
 * bytes as they are. On a terminal, fact values (a plugin's, or a server's)
 * must not drive it: their control characters are shown as escapes, line
 * breaks kept.
 */
export function exportedText(chunk: string, onTerminal: boolean): string {
  return onTerminal ? escapeControlKeepingLines(chunk) : chunk;
}

function exportFormat(value: string): ExportFormat {
  if (!isExportFormat(value)) throw new InvalidArgumentError(`use ${EXPORT_FORMATS.join(' or ')}`);
  return value;
}

export function printDiff(diff: BatchDiff): void {
  for (const project of diff.projects) {
    const { from, to } = project.status;
    say(`${project.projectId}  ${from === to ? from : `${from} → ${to}`}`);
    for (const fact of project.added) say(`  + ${fact.id}: ${fact.value}`);
    for (const fact of project.removed) say(`  - ${fact.id}: ${fact.value}`);
    for (const change of project.changed) {
      const warning = change.warning
        ? ` (warning: ${change.warning.from ?? 'none'} → ${change.warning.to ?? 'none'})`
        : '';
      say(`  ~ ${change.id}: ${change.from} → ${change.to}${warning}`);
    }
  }
  const count = diff.projects.length;
  say(
    count === 0
      ? `no difference from ${diff.from} to ${diff.to}`
      : `${count} project${count === 1 ? '' : 's'} changed from ${diff.from} to ${diff.to}`,
  );
}
