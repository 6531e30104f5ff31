// switchyard inspect / batch / run / op / audit: queued work (docs/CLI.md "Work").
import { InvalidArgumentError, type Command } from 'commander';
import cliProgress from 'cli-progress';
import ms from 'ms';
import { BATCH_STATES, isBatchOver, type BatchState, type BatchView } from '../../core/batches.js';
import { MAX_PAGE_LIMIT } from '../../core/pages.js';
import { InvalidInputError } from '../../core/errors.js';
import { OPERATION_STATES, type OperationState, type OperationView } from '../../core/operations.js';
import type { Backend } from '../backend.js';
import { withBackend } from '../context.js';
import { ago, emit, note, printFields, printJson, printTable, say, whenWithAgo } from '../output.js';
import { durationFrom, milliseconds, parseJsonInput, positiveInt, requireYes } from '../parse.js';
import { registerBatchControlCommands } from './batch-control.js';

/** Exit status set by commands whose requested work failed (docs/CLI.md: 1); an empty message prints nothing. */
export class WorkFailed extends Error {
  readonly exitCode: number = 1;
}

/** Ctrl-C while following a batch: the batch keeps running; exit 130 as after SIGINT. */
export class Interrupted extends WorkFailed {
  override readonly exitCode = 130;
}

const NO_WORKER_AFTER_MS = 3_000;

export function registerWorkCommands(program: Command): void {
  program
    .command('inspect <plugin> [projects...]')
    .description('one batch of inspections: the named projects, or --all trusted projects')
    .option('--all', 'every trusted project')
    .option('--no-wait', 'print the batch at once instead of following it')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard inspect fixture-inspector --all\n  switchyard inspect fixture-inspector shop blog --json',
    )
    .action(
      async (
        pluginId: string,
        projects: string[],
        options: { all?: boolean; wait: boolean },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          if (options.all && projects.length > 0)
            throw new InvalidInputError('name projects or use --all, not both');
          if (!options.all && projects.length === 0)
            throw new InvalidInputError('name at least one project, or use --all');
          const batch = await backend.work.createBatch(pluginId, options.all ? 'all' : projects);
          await finishBatch(backend.work, batch, config.json, options.wait);
        }),
    );

  const batch = program
    .command('batch')
    .description('inspection batches')
    .addHelpText('after', '\nExamples:\n  switchyard batch list\n  switchyard batch show <batchId> --json');
  batch
    .command('show <batchId>')
    .description('counts so far (pending too) and per-project results, each as soon as its call ended')
    .option('--watch', 'follow it live until it ends')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard batch show batch_1f2e… --json\n  switchyard batch show batch_1f2e… --watch',
    )
    .action(async (batchId: string, options: { watch?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        let view = await backend.work.getBatch(batchId);
        if (options.watch && !isBatchOver(view))
          view = await followWithProgress(backend.work, view, config.json);
        emit(config.json, batchDocument(view), () => printBatchResults(view));
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
          ['BATCH', 'PLUGIN', 'STATE', 'TOTAL', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PENDING', 'CREATED'],
          batches.map((item) => [
            item.batchId,
            item.pluginId,
            item.state,
            item.total,
            item.succeeded,
            item.failed,
            item.cancelled,
            item.pending,
            ago(item.createdAt),
          ]),
        );
      }),
    );
  registerBatchControlCommands(batch);

  program
    .command('run <plugin> <project> <action>')
    .description('queue one durable operation (a plugin action on a project)')
    .option('--input <json>', 'the action input, as JSON')
    .option('--yes', 'confirm: this lets the plugin change the project')
    .option('--idempotency-key <key>', 'the same key returns the same operation')
    .option('--wait', 'follow it to a terminal state (exit 1 unless it succeeded)')
    .option(
      '--timeout <duration>',
      "a shorter time limit than the plugin's operate limit (`plugin show` prints it): 30s, 15m",
      milliseconds('--timeout'),
    )
    .addHelpText(
      'after',
      '\nExample:\n  switchyard run fixture-inspector shop fixture.echo --input \'{"hello":"world"}\' --yes --wait',
    )
    .action(
      async (
        pluginId: string,
        projectId: string,
        action: string,
        options: { input?: string; yes?: boolean; idempotencyKey?: string; wait?: boolean; timeout?: number },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const input = parseJsonInput(options.input);
          requireYes(options.yes, `run ${pluginId} ${projectId} ${action}`);
          const { operation, created } = await backend.work.createOperation({
            pluginId,
            projectId,
            action,
            input,
            ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
            ...(options.timeout !== undefined ? { timeoutMs: options.timeout } : {}),
          });
          if (!options.wait) {
            if (config.json) return printJson(operation);
            return say(`${operation.id}${created ? '' : ' (existing operation for this idempotency key)'}`);
          }
          await finishOperation(backend.work, operation, config.json);
        }),
    );

  const op = program
    .command('op')
    .description('durable operations')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard op list --project shop\n  switchyard op cancel <operationId>',
    );
  op.command('list')
    .description('the newest operations')
    .option('--project <id>', 'only this project')
    .option('--plugin <id>', 'only this plugin')
    .option(
      '--state <state>',
      `only this state: ${OPERATION_STATES.join(', ')}`,
      oneOf('--state', OPERATION_STATES),
    )
    .option('--limit <n>', 'how many', positiveInt('--limit'), 20)
    .addHelpText('after', '\nExample:\n  switchyard op list --project shop --state failed')
    .action(
      async (
        options: { project?: string; plugin?: string; state?: OperationState; limit: number },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const { items: operations } = await backend.work.listOperations({
            limit: Math.min(options.limit, MAX_PAGE_LIMIT),
            ...(options.project ? { projectId: options.project } : {}),
            ...(options.plugin ? { pluginId: options.plugin } : {}),
            ...(options.state ? { state: options.state } : {}),
          });
          if (config.json) return printJson(operations);
          printTable(
            ['OPERATION', 'PLUGIN', 'PROJECT', 'ACTION', 'STATE', 'ERROR', 'REQUESTED'],
            operations.map((item) => [
              item.id,
              item.pluginId,
              item.projectId,
              item.action,
              item.state,
              item.errorCode,
              ago(item.requestedAt),
            ]),
          );
        }),
    );
  op.command('show <id>')
    .description('one operation with its result or error')
    .addHelpText('after', '\nExample:\n  switchyard op show op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const operation = await backend.work.getOperation(id);
        emit(config.json, operation, () => printOperation(operation));
      }),
    );
  op.command('cancel <id>')
    .description('cancel: a queued operation never starts; a running one is killed')
    .addHelpText('after', '\nExample:\n  switchyard op cancel op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const operation = await backend.work.cancelOperation(id);
        emit(config.json, operation, () => say(`${id}: ${operation.state}`));
      }),
    );
  op.command('wait <id>')
    .description('follow an operation to a terminal state (exit 1 unless it succeeded)')
    .addHelpText('after', '\nExample:\n  switchyard op wait op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        await finishOperation(backend.work, await backend.work.getOperation(id), config.json);
      }),
    );

  program
    .command('audit')
    .description('newest audit entries: who trusted, enabled, ran or cancelled what')
    .option('--limit <n>', 'how many', positiveInt('--limit'), 50)
    .option('--actor <actor>', 'only this actor (a local user, token:<name>, scheduler:<id>, …)')
    .option('--action <prefix>', 'only actions starting with this (plugin. → every plugin decision)')
    .option('--target <id>', 'only entries about this plugin, project, batch or operation')
    .option(
      '--since <duration>',
      'only entries newer than this (30s, 15m, 2h, 7d)',
      durationFrom('--since', 1),
    )
    .addHelpText('after', '\nExample:\n  switchyard audit --action batch. --since 2h')
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
            ...(options.since ? { withinMs: options.since } : {}),
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

async function finishOperation(
  work: Backend['work'],
  operation: OperationView,
  json: boolean,
): Promise<void> {
  const warning = warnWithoutWorkers(work, 'operate', () => operation.state === 'queued');
  const final = await work.waitOperation(operation.id).finally(() => clearTimeout(warning));
  emit(json, final, () => printOperation(final));
  if (final.state !== 'succeeded') throw new WorkFailed(`operation ${final.id} ended ${final.state}`);
}

export async function followWithProgress(
  work: Backend['work'],
  batch: BatchView,
  json: boolean,
): Promise<BatchView> {
  let latest = { done: 0, total: batch.total };
  const warning = warnWithoutWorkers(work, 'inspect', () => latest.done === 0);
  const bar =
    !json && process.stdout.isTTY
      ? new cliProgress.SingleBar(
          {
            // Our own eta: cli-progress shows "eta INFs" until the first call ends.
            format: 'inspecting {bar} {value}/{total} | {failed} failed | {rate}/s | eta {etaText}',
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  const started = Date.now();
  // Ctrl-C stops following, not the batch: it keeps running on the workers.
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.once('SIGINT', onSigint);
  bar?.start(batch.total, 0, { failed: 0, rate: '0.0', etaText: etaText(0, batch.total, 0) });
  try {
    const final = await work.followBatch(
      batch.batchId,
      (progress) => {
        const done = progress.succeeded + progress.failed + (progress.cancelled ?? 0);
        latest = { done, total: progress.total };
        const elapsedMs = Date.now() - started;
        const rate = (done / Math.max(0.001, elapsedMs / 1_000)).toFixed(1);
        bar?.update(done, {
          failed: progress.failed,
          rate,
          etaText: etaText(done, progress.total, elapsedMs),
        });
      },
      { pollMs: 500, signal: interrupt.signal },
    );
    if (interrupt.signal.aborted) {
      bar?.stop();
      const done = final.total - final.pending;
      throw new Interrupted(
        [
          `stopped following; batch ${final.batchId} keeps running (${done} of ${final.total} done, ${final.failed} failed)`,
          `  follow it:  switchyard batch show ${final.batchId} --watch`,
          `  cancel it:  switchyard batch cancel ${final.batchId}`,
        ].join('\n'),
      );
    }
    return final;
  } finally {
    process.removeListener('SIGINT', onSigint);
    clearTimeout(warning);
    bar?.stop();
  }
}

/** inspect and batch retry: print the batch at once (no wait) or follow it and print its results; exit 1 unless all succeeded. */
export async function finishBatch(
  work: Backend['work'],
  batch: BatchView,
  json: boolean,
  wait: boolean,
): Promise<void> {
  if (!wait) {
    if (json) return printJson(withoutResults(batch));
    return say(`batch ${batch.batchId}: ${batch.total} inspections queued`);
  }
  const final = await followWithProgress(work, batch, json);
  if (json) printJson(batchDocument(final));
  else printBatchResults(final);
  const notDone = final.failed + final.cancelled;
  if (notDone > 0)
    throw new WorkFailed(
      `${final.failed} of ${final.total} inspections failed${final.cancelled ? `, ${final.cancelled} cancelled` : ''}`,
    );
}

/** A commander option parser for one of a fixed set of words. */
function oneOf<T extends string>(name: string, values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}`);
    return value as T;
  };
}

/** "12s", "3m" — or "…" until a first call has ended and there is a rate to go by. */
export function etaText(done: number, total: number, elapsedMs: number): string {
  if (done >= total) return '0s';
  if (done === 0 || elapsedMs <= 0) return '…';
  return ms(Math.ceil(((total - done) * elapsedMs) / done / 1_000) * 1_000);
}

/** Says so when queued work has no worker consuming its queue, instead of waiting in silence. */
function warnWithoutWorkers(
  work: Backend['work'],
  queue: 'inspect' | 'operate',
  stillWaiting: () => boolean,
): NodeJS.Timeout {
  return setTimeout(() => {
    void work.workersConsuming(queue).then((count) => {
      if (count === 0 && stillWaiting()) {
        note(
          `no worker is consuming the ${queue} queue; the work stays queued until one starts (\`switchyard worker\` or \`switchyard up\`)`,
        );
      }
    });
  }, NO_WORKER_AFTER_MS);
}

export function withoutResults(batch: BatchView) {
  const { results: _results, ...rest } = batch;
  return rest;
}

/** docs/CLI.md: {batchId, total, succeeded, failed, results: [...]} (+ pending, state, …). */
function batchDocument(batch: BatchView) {
  return { ...batch, results: batch.results ?? [] };
}

export function printBatchResults(batch: BatchView): void {
  printTable(
    ['PROJECT', 'STATUS', 'SUMMARY / ERROR', 'FACTS'],
    (batch.results ?? []).map((outcome) => [
      outcome.projectId,
      outcome.status,
      outcome.result?.summary ?? (outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : ''),
      outcome.result ? outcome.result.facts.map((fact) => `${fact.label}: ${fact.value}`).join('; ') : '',
    ]),
  );
  say(
    `batch ${batch.batchId}: ${batch.state}: ${batch.succeeded} succeeded, ${batch.failed} failed${batch.cancelled ? `, ${batch.cancelled} cancelled` : ''}${batch.pending ? `, ${batch.pending} pending` : ''} of ${batch.total}`,
  );
}

function printOperation(operation: OperationView): void {
  const fields: [string, string | undefined][] = [
    ['id', operation.id],
    ['plugin', operation.pluginId],
    ['project', operation.projectId],
    ['action', operation.action],
    ['state', operation.state],
    ['error', operation.errorCode ? `${operation.errorCode}: ${operation.errorMessage ?? ''}` : undefined],
    ['summary', operation.result?.summary],
    ['output', operation.result ? JSON.stringify(operation.result.output) : undefined],
    ['requested', whenWithAgo(operation.requestedAt)],
    ['started', whenWithAgo(operation.startedAt)],
    ['finished', whenWithAgo(operation.finishedAt)],
    ['timeout', operation.timeoutMs ? `${ms(operation.timeoutMs)} (asked for)` : undefined],
  ];
  printFields(fields);
}
