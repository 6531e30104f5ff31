// Step 4 of a call (supervisor.ts), once the method answered: stdin closed, a grace period for the
// plugin to exit, then every process of the call killed (containment.ts). An answer does not make
// a call over a limit good: a fork bomb that still answered fails too.
import type { MethodResult } from '@switchyard/plugin-sdk/host';
import type { CallMethod, CallOutcome } from './call-options.js';
import { overLimit } from './call-limits.js';
import type { RunningCall } from './call-start.js';

export async function settle<M extends CallMethod>(
  run: RunningCall<M>,
  result: MethodResult<M>,
): Promise<CallOutcome<M>> {
  const { call, child, times } = run;
  run.deadline.stopClock();
  run.client.close();
  await exitWithin(child.exited, call.limits.graceMs);
  await child.end();
  const over = overLimit(run);
  if (over) throw over;
  const finished = performance.now();
  return {
    result,
    stderr: run.stderr.lines(),
    pid: child.pid,
    durationMs: finished - call.begun,
    phases: {
      spawnMs: times.spawned - call.begun,
      initializeMs: times.initialized - times.spawned,
      callMs: times.responded - times.initialized,
      teardownMs: finished - times.responded,
    },
  };
}

/** The exit, or undefined when the process is still running after `ms`; no timer outlives it. */
export async function exitWithin<T>(exited: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
