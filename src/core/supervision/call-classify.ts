// Step 5 of a call that failed (supervisor.ts): every process of it killed first, whatever the
// error, then the one typed error it ends as, with its redacted stderr lines: the caller's own
// error as it is, else a limit it went over, a cancel, the time limit, or what the exchange said.
import {
  CallCancelledError,
  PluginTimeoutError,
  SpawnFailedError,
  SwitchyardError,
} from '../platform/index.js';
import type { ProcessExit } from './call-process.js';
import type { CallError, CallMethod, SupervisedCall } from './call-options.js';
import type { AbortReason } from './call-deadline.js';
import { overLimit } from './call-limits.js';
import { exitWithin } from './call-settle.js';
import type { RunningCall } from './call-start.js';
import { containment } from './containment.js';
import { hostErrorOf } from './exchange-errors.js';

/** The error a failed call ends with, once nothing of it runs. */
export async function classifyFailure<M extends CallMethod>(
  run: RunningCall<M>,
  error: unknown,
): Promise<unknown> {
  if (!run.running) return notStarted(run, error);
  const { call, child, deadline } = run;
  deadline.stopClock();
  await child.end();
  const exit = await exitWithin(child.exited, call.limits.graceMs);
  if (run.callerError) return run.callerError.error;
  const over = deadline.reason === 'cancelled' ? undefined : overLimit(run);
  return withStderr(over ?? classify(error, deadline.reason, call, exit), run.stderr.lines());
}

/** The process never ran: aborted while it was starting, or it could not start. */
async function notStarted<M extends CallMethod>(run: RunningCall<M>, error: unknown): Promise<CallError> {
  run.deadline.release();
  await run.child.end();
  if (!run.deadline.reason) return spawnFailed(run.call, error);
  return withStderr(classify(error, run.deadline.reason, run.call, undefined), run.stderr.lines());
}

export function spawnFailed<M extends CallMethod>(call: SupervisedCall<M>, error: unknown): CallError {
  return withStderr(
    new SpawnFailedError(`could not start ${call.executablePath}: ${(error as Error).message}`),
    [],
  );
}

export function withStderr(error: SwitchyardError, lines: string[]): CallError {
  return Object.assign(error, { stderr: lines });
}

function classify<M extends CallMethod>(
  error: unknown,
  reason: AbortReason | undefined,
  call: SupervisedCall<M>,
  exit: ProcessExit | undefined,
): SwitchyardError {
  if (reason === 'cancelled') return new CallCancelledError(`the call was cancelled; ${killedText()}`);
  if (reason === 'timeout')
    return new PluginTimeoutError(`no response within ${call.limits.callTimeoutMs} ms; ${killedText()}`);
  if (error instanceof SwitchyardError) return error;
  return hostErrorOf(error, exit);
}

/** What ended a call's processes, as the containment in force does it. */
function killedText(): string {
  return containment().mechanism === 'subreaper'
    ? 'the plugin and every process it started were killed'
    : 'its process group was killed';
}
