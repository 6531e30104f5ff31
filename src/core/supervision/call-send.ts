// Step 3 of a call (supervisor.ts): the caller's last word (beforeSend, an operation's dispatch
// mark), then the method, the last request: its answer lets stdin close (PROTOCOL §9, step 5).
import { RequestAbortedError, type MethodResult } from '@switchyard/plugin-sdk/host';
import type { CallMethod } from './call-options.js';
import type { RunningCall } from './call-start.js';

export async function send<M extends CallMethod>(run: RunningCall<M>): Promise<MethodResult<M>> {
  const { call, client, child, shortcuts, deadline } = run;
  try {
    await call.beforeSend?.();
  } catch (error) {
    // The caller refused to send (e.g. the dispatch mark failed): its error, as it is.
    run.callerError = { error };
    throw error;
  }
  if (deadline.signal.aborted) throw new RequestAbortedError('aborted');
  const sentAhead = shortcuts.methodSentAhead(child);
  const result = await client.request(call.method, call.params, deadline.signal, undefined, sentAhead);
  run.times.responded = performance.now();
  return result;
}
