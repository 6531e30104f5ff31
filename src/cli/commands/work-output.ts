// What the work commands share: following a batch or an operation to its end
// (progress bar, Ctrl-C, a note when no worker consumes the queue), printing
// the result, and the exit status of work that failed (docs/CLI.md: 1).
import cliProgress from 'cli-progress';
import ms from 'ms';
import { withoutResults, type BatchView } from '../../core/work/batches/index.js';
import { isTerminal, operationOutcome, type OperationView } from '../../core/work/operations/index.js';
import { ERROR_CODES, EXIT, exitCodeOf, type ExitCode } from '../../core/platform/index.js';
import type { Backend } from '../backend.js';
import {
  emit,
  errorText,
  note,
  outputWidth,
  printFields,
  printJson,
  printTable,
  say,
  whenWithAgo,
} from '../output.js';

/** Exit status set by commands whose requested work failed (docs/CLI.md: 1); an empty message prints nothing. */
export class WorkFailed extends Error {
  readonly exitCode: ExitCode = EXIT.workFailed;
}

/**
 * Ctrl-C while following a batch or waiting for an operation: the work keeps
 * running; exit 130 as after SIGINT. With --json the error document names
 * the work (`batchId` or `operationId`), so a script can follow it again.
 */
export class Interrupted extends WorkFailed {
  override readonly exitCode = exitCodeOf(ERROR_CODES.INTERRUPTED);
  readonly code = ERROR_CODES.INTERRUPTED;
  constructor(
    message: string,
    readonly work: { batchId: string } | { operationId: string },
  ) {
    super(message);
  }
}

/**
 * Runs `body` with a signal that `signals` abort (default Ctrl-C), so a wait
 * or a follow stops instead of the process dying.
 */
export async function untilInterrupted<T>(
  body: (signal: AbortSignal) => Promise<T>,
  signals: NodeJS.Signals[] = ['SIGINT'],
): Promise<T> {
  const interrupt = new AbortController();
  const stop = () => interrupt.abort();
  for (const signal of signals) process.once(signal, stop);
  try {
    return await body(interrupt.signal);
  } finally {
    for (const signal of signals) process.off(signal, stop);
  }
}

const NO_WORKER_AFTER_MS = 3_000;

export async function finishOperation(
  work: Backend['work'],
  operation: OperationView,
  json: boolean,
  /** Prints the operation's stderr while it runs (`run --follow`); ends when the operation has ended. */
  follow?: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const warning = warnWithoutWorkers(work, 'operate', () => operation.state === 'queued');
  // Ctrl-C stops waiting, not the operation: it keeps going on its worker.
  const final = await untilInterrupted(async (signal) => {
    const [ended] = await Promise.all([
      work.waitOperation(operation.id, { signal }),
      // A follow that fails (the logs route refused, the stream broke) must not lose the outcome.
      follow?.(signal).catch((error: unknown) =>
        note(`stopped following its stderr: ${error instanceof Error ? error.message : String(error)}`),
      ),
    ]);
    return ended;
  }).finally(() => clearTimeout(warning));
  if (!isTerminal(final.state))
    throw new Interrupted(
      [
        `stopped waiting; operation ${final.id} keeps going (${final.state})`,
        `  follow it:  switchyard op wait ${final.id}`,
        `  cancel it:  switchyard op cancel ${final.id}`,
      ].join('\n'),
      { operationId: final.id },
    );
  emit(json, final, () => printOperation(final));
  if (final.state !== 'succeeded') throw new WorkFailed(`operation ${final.id} ended ${final.state}`);
}

/** How long `op cancel` waits for a running call to be killed and its operation to end. */
export const CANCEL_SETTLES_WITHIN_MS = 10_000;

/**
 * op cancel: request it, then wait (bounded; Ctrl-C stops the wait) for the
 * operation to end, so what is printed is how it ended, never the `running`
 * of a call that is being killed. Exit 0 once the cancel was accepted.
 */
export async function cancelOperation(work: Backend['work'], id: string, json: boolean): Promise<void> {
  const requested = await work.cancelOperation(id);
  const final = isTerminal(requested.state)
    ? requested
    : await untilInterrupted((interrupt) =>
        work.waitOperation(id, {
          signal: AbortSignal.any([interrupt, AbortSignal.timeout(CANCEL_SETTLES_WITHIN_MS)]),
        }),
      );
  const pending = isTerminal(final.state)
    ? ''
    : ` (cancel requested; \`switchyard op wait ${id}\` follows it)`;
  if (json && pending) note(`${id}: ${final.state}${pending}`);
  emit(json, final, () => say(`${id}: ${final.state}${pending}`));
}

/**
 * The bar's width that keeps the whole line within the terminal: the text
 * around it takes about 48 columns plus three times the digits of the total
 * (value, total, failed); the bar gets the rest, from 10 to 40.
 */
function barSize(total: number): number {
  const digits = String(total).length;
  const text = 'inspecting '.length + 1 + 2 * digits + 1 + ' | '.length + digits + ' failed'.length;
  const tail = ' | 99999.9/s | eta 99h59m'.length;
  return Math.max(10, Math.min(40, outputWidth() - text - tail - 1));
}

export async function followWithProgress(
  work: Backend['work'],
  batch: BatchView,
  json: boolean,
): Promise<BatchView> {
  let latest = { done: 0, total: count(batch.total) };
  const warning = warnWithoutWorkers(work, 'inspect', () => latest.done === 0);
  const bar =
    !json && process.stdout.isTTY
      ? new cliProgress.SingleBar(
          {
            // Our own eta: cli-progress shows "eta INFs" until the first call ends.
            format: 'inspecting {bar} {value}/{total} | {failed} failed | {rate}/s | eta {etaText}',
            hideCursor: true,
            barsize: barSize(count(batch.total)),
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  const started = Date.now();
  bar?.start(latest.total, 0, { failed: 0, rate: '0.0', etaText: etaText(0, latest.total, 0) });
  try {
    // Ctrl-C stops following, not the batch: it keeps running on the workers.
    let interrupted = false;
    const final = await untilInterrupted((signal) => {
      signal.addEventListener('abort', () => (interrupted = true));
      return work.followBatch(
        batch.batchId,
        (progress) => {
          // Numbers only: cli-progress prints its tokens as they are, and in
          // remote mode these came from a server (a string could hold ESC).
          const failed = count(progress.failed);
          const total = count(progress.total);
          const done = count(progress.succeeded) + failed + count(progress.cancelled);
          latest = { done, total };
          const elapsedMs = Date.now() - started;
          const rate = (done / Math.max(0.001, elapsedMs / 1_000)).toFixed(1);
          bar?.update(done, { failed, rate, etaText: etaText(done, total, elapsedMs) });
        },
        { signal },
      );
    });
    if (interrupted) {
      bar?.stop();
      const done = final.total - final.pending;
      throw new Interrupted(
        [
          `stopped following; batch ${final.batchId} keeps running (${done} of ${final.total} done, ${final.failed} failed)`,
          `  follow it:  switchyard batch show ${final.batchId} --watch`,
          `  cancel it:  switchyard batch cancel ${final.batchId}`,
        ].join('\n'),
        { batchId: final.batchId },
      );
    }
    return final;
  } finally {
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
  failUnlessAllSucceeded(final);
}

/** Exit 1 (WorkFailed) for a finished batch with a failed or cancelled inspection, as `inspect` does. */
export function failUnlessAllSucceeded(final: BatchView): void {
  if (final.failed + final.cancelled > 0)
    throw new WorkFailed(
      `${final.failed} of ${final.total} inspections failed${final.cancelled ? `, ${final.cancelled} cancelled` : ''}`,
    );
}

/** A count as a number: whatever else a server sent (a string, nothing) is 0. */
export function count(value: unknown): number {
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? number : 0;
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

/** docs/CLI.md: {batchId, total, succeeded, failed, results: [...]} (+ pending, state, …). */
export function batchDocument(batch: BatchView) {
  return { ...batch, results: batch.results ?? [] };
}

export function printBatchResults(batch: BatchView): void {
  printTable(
    ['PROJECT', 'STATUS', 'SUMMARY / ERROR', 'FACTS'],
    (batch.results ?? []).map((outcome) => [
      outcome.projectId,
      outcome.status,
      outcome.result
        ? [outcome.result.summary, ...outcome.result.warnings.map((warning) => `⚠ ${warning}`)].join('; ')
        : outcome.error
          ? errorText(outcome.error.code, outcome.error.message)
          : '',
      outcome.result
        ? outcome.result.facts
            .map((fact) => `${fact.label}: ${fact.value}${fact.warning ? ` ⚠ ${fact.warning}` : ''}`)
            .join('; ')
        : '',
    ]),
  );
  say(`batch ${batch.batchId}`);
  say(
    `${batch.state}: ${batch.succeeded} succeeded, ${batch.failed} failed${batch.cancelled ? `, ${batch.cancelled} cancelled` : ''}${batch.pending ? `, ${batch.pending} pending` : ''} of ${batch.total}`,
  );
}

export function printOperation(operation: OperationView): void {
  const fields: [string, string | undefined][] = [
    ['id', operation.id],
    ['plugin', operation.pluginId],
    ['project', operation.projectId],
    ['action', operation.action],
    [
      'state',
      operationOutcome(operation) === 'outcome unknown'
        ? 'failed — OUTCOME UNKNOWN: the plugin may have acted; check the project before running it again'
        : operation.waiting
          ? `${operation.state} — ${operation.waiting}`
          : operation.state,
    ],
    ['warning', operation.workerLost?.message],
    ['error', operation.errorCode ? errorText(operation.errorCode, operation.errorMessage) : undefined],
    ['summary', operation.result?.summary],
    ['input', operation.input !== undefined ? JSON.stringify(operation.input) : undefined],
    ['output', operation.result ? JSON.stringify(operation.result.output) : undefined],
    ['requested', whenWithAgo(operation.requestedAt)],
    ['requested by', operation.requestedBy],
    ['started', whenWithAgo(operation.startedAt)],
    ['worker', operation.worker],
    ['finished', whenWithAgo(operation.finishedAt)],
    ['duration', operation.durationMs !== undefined ? ms(operation.durationMs) : undefined],
    ['cancelled by', operation.cancelledBy],
    ['timeout', operation.timeoutMs ? `${ms(operation.timeoutMs)} (asked for)` : undefined],
  ];
  printFields(fields);
}

/**
 * The command line that requests the same operation again (a new one: no
 * idempotency key), each argument quoted for a POSIX shell where it needs it.
 * The input is the redacted one: a secret in it reads [REDACTED].
 */
export function runAgainCommand(operation: OperationView): string {
  const args = ['switchyard', 'run', operation.pluginId, operation.projectId, operation.action];
  const input = operation.input;
  const empty = input !== null && typeof input === 'object' && Object.keys(input).length === 0;
  if (input !== undefined && !empty) args.push('--input', JSON.stringify(input));
  if (operation.timeoutMs) args.push('--timeout', ms(operation.timeoutMs));
  args.push('--yes');
  return args.map(shellWord).join(' ');
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
