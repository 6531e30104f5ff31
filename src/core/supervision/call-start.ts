// Step 1 of a call (supervisor.ts): start the plugin under the containment in force, with a
// minimal environment, its own TMPDIR and the kernel policy, from the verified executable; its
// stderr kept (bounded) and handed on; its time limit running from here.
import { PluginClient, pluginEnvironment, SAFE_OPEN_FLAGS } from '@switchyard/plugin-sdk/host';
import { closeSync, fstatSync, openSync } from 'node:fs';
import { SwitchyardError } from '../platform/index.js';
import { interpreterPaths, kernelPolicyOf, runByNode, scratchTmp, type CallPolicy } from './call-policy.js';
import type { CallProcess } from './call-process.js';
import { spawnFailed, withStderr } from './call-classify.js';
import { Deadline } from './call-deadline.js';
import type { CallMethod, FileStamp, SupervisedCall } from './call-options.js';
import { CallShortcuts } from './call-shortcuts.js';
import { startCallProcess } from './containment.js';
import { StderrTail } from './stderr-tail.js';

/** One call under way: what each step after the start reads and leaves for the next. */
export interface RunningCall<M extends CallMethod> {
  readonly call: SupervisedCall<M>;
  /** The call's scratch directory (its TMPDIR is in it). */
  readonly scratch: string;
  readonly child: CallProcess;
  readonly client: PluginClient;
  readonly stderr: StderrTail;
  readonly deadline: Deadline;
  readonly shortcuts: CallShortcuts;
  /** False until the process runs: a failure before is one to start, after one of the exchange. */
  running: boolean;
  /** The caller's beforeSend failed: its error ends the call as it is. */
  callerError?: { error: unknown };
  /** performance.now() at each step's end, for the outcome's phases. */
  readonly times: { spawned: number; initialized: number; responded: number };
}

export async function startCall<M extends CallMethod>(
  call: SupervisedCall<M>,
  scratch: string,
): Promise<RunningCall<M>> {
  const child = await startPlugin(call, scratch);
  const stderr = new StderrTail();
  child.stderr.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    call.onStderr?.(chunk);
  });
  child.stderr.on('error', () => {});
  return {
    call,
    scratch,
    child,
    client: new PluginClient(child.stdin, child.stdout),
    stderr,
    deadline: new Deadline(call.limits.callTimeoutMs, call.signal),
    shortcuts: new CallShortcuts(call.identity, call.grants),
    running: false,
    times: { spawned: 0, initialized: 0, responded: 0 },
  };
}

/** The plugin's process, asked for; it may not run yet (see containment.ts startCallProcess). */
async function startPlugin<M extends CallMethod>(
  call: SupervisedCall<M>,
  scratch: string,
): Promise<CallProcess> {
  const env: Record<string, string> = { ...pluginEnvironment(), TMPDIR: scratchTmp(scratch) };
  const { policy, required } = call.confinement;
  // From a copy: opened only to read its #! line (its interpreter's paths), started by path.
  let copyFd: number | undefined;
  try {
    if (call.packageCopy !== undefined && policy) copyFd = openSync(call.executablePath, SAFE_OPEN_FLAGS);
    const fd = call.executableFd ?? copyFd;
    // The open file's identity: what is read of it (its #! line) is cached under it.
    const identity = fd === undefined ? undefined : fileIdentity(fd, call.executableStats);
    if (
      call.executableFd !== undefined &&
      runByNode(call.executableFd, `${call.executablePath}\0${identity}`)
    )
      env.NODE_OPTIONS = '--preserve-symlinks-main';
    return await startCallProcess({
      file: call.executablePath,
      args: call.arguments,
      cwd: call.packageDir,
      env,
      ...(call.executableFd === undefined ? {} : { executableFd: call.executableFd }),
      ...(policy
        ? { policy: kernelPolicyFor(call, policy, { path: env.PATH ?? '', scratch, fd, identity }) }
        : {}),
      ...(required ? { requireConfinement: true } : {}),
    });
  } catch (error) {
    if (error instanceof SwitchyardError) throw withStderr(error, []);
    throw spawnFailed(call, error);
  } finally {
    if (copyFd !== undefined) closeSync(copyFd);
  }
}

/** The helper's policy for this call: the plugin's, with the package, its interpreter's tree and the scratch directory. */
function kernelPolicyFor<M extends CallMethod>(
  call: SupervisedCall<M>,
  policy: CallPolicy,
  context: { path: string; scratch: string; fd: number | undefined; identity: string | undefined },
) {
  const { path, scratch, fd, identity } = context;
  const interpreter =
    fd === undefined || identity === undefined
      ? []
      : interpreterPaths(call.executablePath, fd, identity, path);
  return kernelPolicyOf(policy, {
    packageDir: call.packageDir,
    ...(call.packageCopy === undefined ? {} : { packageCopy: call.packageCopy }),
    interpreter,
    scratch,
  });
}

/** The open file's device, inode and change time: another file, or this one changed, has another. */
function fileIdentity(fd: number, known?: FileStamp): string {
  const stats = known ?? fstatSync(fd, { bigint: true });
  return `${stats.dev}:${stats.ino}:${stats.ctimeNs}`;
}
