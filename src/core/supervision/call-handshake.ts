// Step 2 of a call (supervisor.ts): initialize with the grants, written before the process runs
// (through the native helper it leaves with the spawn request: one write, no round trip for the
// pid), then the running identity checked against the trusted package (PROTOCOL §9.3, §9.4).
import { PROTOCOL_VERSION, identityProblems, type Scope } from '@switchyard/plugin-sdk/protocol';
import type { MethodResult } from '@switchyard/plugin-sdk/host';
import { IdentityMismatchError, SwitchyardError } from '../platform/index.js';
import type { CallMethod, TrustedIdentity } from './call-options.js';
import type { RunningCall } from './call-start.js';

export const HOST_VERSION = 'switchyard-ts/0.1.0';

export async function handshake<M extends CallMethod>(run: RunningCall<M>): Promise<void> {
  const { call, client, child, shortcuts, deadline } = run;
  const initializing = client.request(
    'initialize',
    { protocolVersion: PROTOCOL_VERSION, hostVersion: HOST_VERSION, grantedScopes: [...call.grants] },
    deadline.signal,
    shortcuts.initializeMemo,
  );
  initializing.catch(() => {}); // awaited below, once the process runs
  shortcuts.sendMethodAhead(call, child, client);
  // Bounded by the time limit and cancel too: a stopped helper never says it started.
  await Promise.race([child.started, deadline.rejectOnAbort()]);
  run.running = true;
  run.times.spawned = performance.now();
  call.onSpawn?.(child.pid);
  verifyOnce(run, await initializing);
  run.times.initialized = performance.now();
}

/** The answer checked against the trusted identity and the grants, unless these very bytes passed before. */
function verifyOnce<M extends CallMethod>(run: RunningCall<M>, init: MethodResult<'initialize'>): void {
  const { call, child, client, shortcuts } = run;
  if (shortcuts.verifiedBefore(init)) return shortcuts.remember(undefined, client.lastAnswer);
  try {
    verifyIdentity(init, call.identity, call.grants);
  } catch (error) {
    // Cannot happen while the same bytes get the same verdict; if it ever does, it must not pass quietly.
    if (child.sentAhead && error instanceof SwitchyardError)
      error.message += '; the helper had already sent the method on these bytes (a host fault: report it)';
    throw error;
  }
  shortcuts.remember(init, client.lastAnswer);
}

function verifyIdentity(
  init: MethodResult<'initialize'>,
  identity: TrustedIdentity,
  grants: readonly Scope[],
): void {
  const problems = identityProblems(init, identity, grants);
  if (problems.length > 0) {
    throw new IdentityMismatchError(
      `the running plugin's identity differs from the trusted package: ${problems.join('; ')}`,
    );
  }
}
