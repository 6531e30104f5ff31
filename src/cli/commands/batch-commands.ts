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
import { InvalidInputError } from '../../core/platform/index.js';
import { KEEP_PER_PLUGIN, withoutResults } from '../../core/work/batches/index.js';
import { withBackend } from '../command-context.js';
import { emit, escapeControlKeepingLines, say } from '../output.js';
import { oneOf } from '../parse.js';
import { WorkFailed, finishBatch } from './work-output.js';

function cancelledLine(view: BatchView): string {
  return `${view.batchId}: ${view.state} (${view.succeeded} succeeded, ${view.failed} failed, ${view.cancelled} cancelled of ${view.total})`;
}

export function registerBatchControlCommands(batch: Command): void {
  batch
    .command('cancel [batchId]')
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
      '\nExamples:\n  switchyard batch cancel batch_1f2e…\n  switchyard batch cancel --schedule nightly\n  switchyard batch cancel --state running --yes',
    )
    .action(
      async (
        batchId: string | undefined,
        options: { schedule?: string; state?: 'running'; yes?: boolean },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const bulk = options.schedule !== undefined || options.state !== undefined;
          if (bulk === (batchId !== undefined))
            throw new InvalidInputError(
              'name one batch, or cancel in bulk with --schedule <id|name> or --state running',
            );
          if (!bulk) {
            const view = await backend.work.cancelBatch(batchId!);
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

  batch
    .command('retry <batchId>')
    .description('a new batch over the same plugin and projects; waits and prints like inspect')
    .option('--failed', 'only the projects that failed or were cancelled')
    .option('--no-wait', 'print the new batch at once instead of following it')
    .addHelpText('after', '\nExample:\n  switchyard batch retry batch_1f2e… --failed')
    .action(async (batchId: string, options: { failed?: boolean; wait: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const retry = await backend.work.retryBatch(batchId, { failedOnly: options.failed === true });
        await finishBatch(backend.work, retry, config.json, options.wait);
      }),
    );

  batch
    .command('diff <batchA> <batchB>')
    .description('what changed from batch A to batch B: facts added, removed, changed; status changes')
    .option('--exit-code', 'exit 1 when there is any difference (as git diff --exit-code)')
    .addHelpText(
      'after',
      `\nOnly projects with a difference are listed. Retention keeps the newest ${KEEP_PER_PLUGIN} finished batches of each plugin however old, so there is always one to compare with.\n\nExample:\n  switchyard batch diff batch_last_week… batch_today… --exit-code`,
    )
    .action(async (from: string, to: string, options: { exitCode?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const diff = await backend.work.diffBatches(from, to);
        emit(config.json, diff, () => printDiff(diff));
        if (options.exitCode && hasDifferences(diff)) throw new WorkFailed('');
      }),
    );

  batch
    .command('export <batchId>')
    .description('the results on stdout, streamed: jsonl (one line per project) or csv (one row per fact)')
    .requiredOption('--format <format>', EXPORT_FORMATS.join(' or '), exportFormat)
    .addHelpText('after', '\nExample:\n  switchyard batch export batch_1f2e… --format csv > results.csv')
    .action(async (batchId: string, options: { format: ExportFormat }, command: Command) =>
      withBackend(command, async ({ backend }) => {
        const onTerminal = process.stdout.isTTY === true;
        for await (const chunk of await backend.work.exportBatch(batchId, options.format)) {
          if (!process.stdout.write(exportedText(chunk, onTerminal))) await once(process.stdout, 'drain');
        }
      }),
    );
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
