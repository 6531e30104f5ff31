// The per-call supervisor (docs/PROTOCOL.md §9.3–9.7): one call = one process, read top to bottom
// as the steps it goes through, each in its own file:
//   start      call-start.ts      the plugin started, contained and confined, its time limit running
//   handshake  call-handshake.ts  initialize with the grants, the running identity verified
//   send       call-send.ts       the caller's last word (beforeSend), then the method
//   settle     call-settle.ts     stdin closed, a grace period, every process killed, limits checked
//   classify   call-classify.ts   a failed call: its processes killed, then the one typed error
// The options are normalised once, here (call-options.ts); the speed-ups (initialize answers kept,
// the method sent ahead, stdin closed by the helper) are behind one seam, call-shortcuts.ts.
// Every way a call can go wrong ends as one typed error; nothing of the call outlives it.
import type { CallMethod, CallOutcome, CallSpec } from './call-options.js';
import { normaliseCall } from './call-options.js';
import { classifyFailure } from './call-classify.js';
import { handshake } from './call-handshake.js';
import { scratchDirectory } from './call-policy.js';
import { send } from './call-send.js';
import { settle } from './call-settle.js';
import { startCall } from './call-start.js';

export {
  DEFAULT_LIMITS,
  type CallError,
  type CallOutcome,
  type CallSpec,
  type SupervisorLimits,
  type TrustedIdentity,
} from './call-options.js';
export { HOST_VERSION } from './call-handshake.js';

export async function superviseCall<M extends CallMethod>(spec: CallSpec<M>): Promise<CallOutcome<M>> {
  const call = normaliseCall(spec);
  // The call's own TMPDIR, the one place it may write (besides an operated project).
  const scratch = scratchDirectory();
  try {
    const run = await startCall(call, scratch.path);
    try {
      await handshake(run);
      const result = await send(run);
      return await settle(run, result);
    } catch (error) {
      throw await classifyFailure(run, error);
    } finally {
      run.deadline.release();
      run.child.stdin.destroy();
      run.child.stdout.destroy();
      run.child.stderr.destroy();
    }
  } finally {
    scratch.release();
  }
}
