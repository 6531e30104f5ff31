// The per-call supervisor (docs/PROTOCOL.md §9.3–9.7): one call = one process.
// Spawn with a minimal environment in its own process group, initialize with
// the grants, verify the running identity, make the one call, close stdin,
// allow a grace period, then kill the call's processes: every descendant under
// the native helper's subreaper, else the group (src/core/supervision/containment.ts).
// Every way this can go wrong ends as one typed error; nothing of the call
// outlives it.
import { PROTOCOL_VERSION, identityProblems, type Scope } from '@switchyard/plugin-sdk/protocol';
import {
  AnswerMemo,
  PluginClient,
  RequestAbortedError,
  pluginEnvironment,
  SAFE_OPEN_FLAGS,
  type MethodName,
  type MethodParams,
  type MethodResult,
} from '@switchyard/plugin-sdk/host';
import { closeSync, fstatSync, openSync, type BigIntStats } from 'node:fs';
import {
  CallCancelledError,
  IdentityMismatchError,
  PluginTimeoutError,
  ResourceLimitError,
  SpawnFailedError,
  SwitchyardError,
} from '../platform/index.js';
import {
  interpreterPaths,
  kernelPolicyOf,
  scratchAtFileLimit,
  runByNode,
  scratchDirectory,
  scratchTmp,
  type CallPolicy,
} from './call-policy.js';
import { containment, startCallProcess, type CallProcess } from './containment.js';
import { hostErrorOf } from './exchange-errors.js';
import { StderrTail } from './stderr-tail.js';

export const HOST_VERSION = 'switchyard-ts/0.1.0';

export interface SupervisorLimits {
  /** The whole exchange (initialize + call) must finish within this. */
  callTimeoutMs: number;
  /** After stdin closes, how long the plugin may take to exit before SIGKILL. */
  graceMs: number;
}

export const DEFAULT_LIMITS: SupervisorLimits = { callTimeoutMs: 15_000, graceMs: 3_000 };

/** The trusted identity a running plugin must echo. */
export interface TrustedIdentity {
  id: string;
  name: string;
  version: string;
  capabilities: readonly string[];
  requestedScopes: readonly string[];
}

/** What tells one file, and one state of it, from another: a bigint fstat has it. */
type FileStamp = Pick<BigIntStats, 'dev' | 'ino' | 'ctimeNs'>;

export interface CallSpec<M extends Exclude<MethodName, 'initialize'>> {
  executablePath: string;
  /**
   * An open descriptor of the verified executable: the plugin is started from
   * it (exec by descriptor), so a file renamed over the path meanwhile is never
   * run. The caller keeps it open for the call and closes it.
   */
  executableFd?: number;
  /** That descriptor's fstat, when the caller has just made it (no second one). */
  executableStats?: FileStamp;
  /**
   * The read-only verified copy of the package `executablePath` lies in
   * (src/core/plugins/package-copy.ts): the plugin is started by that path, so
   * it sees its real path, and may read and execute the copy.
   */
  packageCopy?: string;
  arguments: readonly string[];
  packageDir: string;
  identity: TrustedIdentity;
  grants: readonly Scope[];
  method: M;
  params: MethodParams<M>;
  limits?: Partial<SupervisorLimits> | undefined;
  /** Aborting kills the process group at once; the call fails with CallCancelledError. */
  signal?: AbortSignal;
  /** Runs after identity verification, right before the method is written (the dispatch mark). */
  beforeSend?: () => Promise<void>;
  onSpawn?: (pid: number) => void;
  /** Every stderr chunk as it arrives (live logs); the bounded tail is kept either way. */
  onStderr?: (chunk: Buffer) => void;
  /** Kernel confinement of the call (files, network, limits); without it only signals are scoped. */
  policy?: CallPolicy;
  /** Refuse to start (ConfinementUnavailableError) unless every mechanism is in force. */
  requireConfinement?: boolean;
}

export interface CallOutcome<M extends MethodName> {
  result: MethodResult<M>;
  stderr: string[];
  pid: number;
  durationMs: number;
  /** Where the time went, for the overhead benchmark. */
  phases: { spawnMs: number; initializeMs: number; callMs: number; teardownMs: number };
}

/** Every failure carries the call's redacted stderr lines. */
export type CallError = SwitchyardError & { stderr?: string[] };

export async function superviseCall<M extends Exclude<MethodName, 'initialize'>>(
  spec: CallSpec<M>,
): Promise<CallOutcome<M>> {
  const limits = { ...DEFAULT_LIMITS, ...spec.limits };
  const started = performance.now();
  const stderr = new StderrTail();
  const spawnFailed = (error: unknown) =>
    withStderr(
      new SpawnFailedError(`could not start ${spec.executablePath}: ${(error as Error).message}`),
      [],
    );
  // The call's own TMPDIR, the one place it may write (besides an operated project).
  const scratch = scratchDirectory();
  try {
    return await superviseIn(spec, limits, started, stderr, spawnFailed, scratch.path);
  } finally {
    scratch.release();
  }
}

async function superviseIn<M extends Exclude<MethodName, 'initialize'>>(
  spec: CallSpec<M>,
  limits: SupervisorLimits,
  started: number,
  stderr: StderrTail,
  spawnFailed: (error: unknown) => CallError,
  scratch: string,
): Promise<CallOutcome<M>> {
  const env: Record<string, string> = { ...pluginEnvironment(), TMPDIR: scratchTmp(scratch) };
  // From a copy: opened only to read its #! line (its interpreter's paths), started by path.
  let copyFd: number | undefined;
  let child: CallProcess;
  try {
    if (spec.packageCopy !== undefined && spec.policy)
      copyFd = openSync(spec.executablePath, SAFE_OPEN_FLAGS);
    const fd = spec.executableFd ?? copyFd;
    // The open file's identity: what is read of it (its #! line) is cached under it.
    const identity = fd === undefined ? undefined : fileIdentity(fd, spec.executableStats);
    if (
      spec.executableFd !== undefined &&
      runByNode(spec.executableFd, `${spec.executablePath}\0${identity}`)
    )
      env.NODE_OPTIONS = '--preserve-symlinks-main';
    child = await startCallProcess({
      file: spec.executablePath,
      args: spec.arguments,
      cwd: spec.packageDir,
      env,
      ...(spec.executableFd === undefined ? {} : { executableFd: spec.executableFd }),
      ...(spec.policy
        ? { policy: kernelPolicyFor(spec, spec.policy, env.PATH ?? '', scratch, fd, identity) }
        : {}),
      ...(spec.requireConfinement ? { requireConfinement: true } : {}),
    });
  } catch (error) {
    if (error instanceof SwitchyardError) throw withStderr(error, []);
    throw spawnFailed(error);
  } finally {
    if (copyFd !== undefined) closeSync(copyFd);
  }
  child.stderr.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    spec.onStderr?.(chunk);
  });
  child.stderr.on('error', () => {});

  const client = new PluginClient(child.stdin, child.stdout);
  const abort = new AbortController();
  let reason: 'timeout' | 'cancelled' | undefined;
  let callerError: { error: unknown } | undefined;
  const timer = setTimeout(() => {
    reason ??= 'timeout';
    abort.abort();
  }, limits.callTimeoutMs);
  const onCancel = () => {
    reason ??= 'cancelled';
    abort.abort();
  };
  if (spec.signal?.aborted) onCancel();
  spec.signal?.addEventListener('abort', onCancel, { once: true });

  // initialize is written before the process runs: through the native helper
  // it leaves with the spawn request, one write and no round trip for the pid.
  const known = knownAnswers(spec.identity, spec.grants);
  const initializing = client.request(
    'initialize',
    { protocolVersion: PROTOCOL_VERSION, hostVersion: HOST_VERSION, grantedScopes: [...spec.grants] },
    abort.signal,
    known.memo,
  );
  initializing.catch(() => {}); // awaited below, once the process runs
  // The method can leave with the spawn request too: the helper sends it the moment the plugin's
  // first line is, byte for byte, an initialize answer already verified against this identity and
  // these grants (the same bytes get the same verdict), and says so before that line reaches the
  // client. Not when something must run between the two (an operation's dispatch mark).
  if (known.line && known.line.length > 0 && !spec.beforeSend && child.sendAfterFirstLine)
    child.sendAfterFirstLine(known.line, Buffer.from(client.nextRequestLine(spec.method, spec.params)), 2);
  try {
    // Bounded by the time limit and cancel too: a stopped helper never says it started.
    await Promise.race([child.started, rejectOnAbort(abort.signal)]);
  } catch (error) {
    clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onCancel);
    await child.end();
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
    if (reason) throw withStderr(classify(error, reason, limits, undefined), stderr.lines());
    throw spawnFailed(error);
  }
  const { pid, exited } = child;
  const spawnedAt = performance.now();
  spec.onSpawn?.(pid);

  try {
    const init = await initializing;
    // The same answer object means the same bytes, already verified against this identity and these grants.
    if (!known.verified.has(init)) {
      try {
        verifyIdentity(init, spec.identity, spec.grants);
      } catch (error) {
        // Cannot happen while the same bytes get the same verdict; if it ever does, it must not pass quietly.
        if (child.sentAhead && error instanceof SwitchyardError)
          error.message +=
            '; the helper had already sent the method on these bytes (a host fault: report it)';
        throw error;
      }
      known.verified.add(init);
    }
    known.line = client.lastAnswer;
    const initializedAt = performance.now();
    try {
      await spec.beforeSend?.();
    } catch (error) {
      // The caller refused to send (e.g. the dispatch mark failed): its error, as it is.
      callerError = { error };
      throw error;
    }
    if (abort.signal.aborted) throw new RequestAbortedError('aborted');
    // The method is the last request: its answer (the second line) lets stdin close (PROTOCOL §9, step 5).
    const sentAhead = child.sentAhead === true;
    if (!sentAhead) child.closeStdinAfterAnswers?.(2);
    const result = await client.request(spec.method, spec.params, abort.signal, undefined, sentAhead);
    const respondedAt = performance.now();
    clearTimeout(timer);
    client.close();
    await exitWithin(exited, limits.graceMs);
    await child.end();
    // An answer does not make a call over a limit good: a fork bomb that still answered fails too.
    const overLimit = limitError(limitsHit(child, spec.policy, scratch), spec.policy);
    if (overLimit) throw overLimit;
    const finishedAt = performance.now();
    return {
      result,
      stderr: stderr.lines(),
      pid,
      durationMs: finishedAt - started,
      phases: {
        spawnMs: spawnedAt - started,
        initializeMs: initializedAt - spawnedAt,
        callMs: respondedAt - initializedAt,
        teardownMs: finishedAt - respondedAt,
      },
    };
  } catch (error) {
    clearTimeout(timer);
    // Kill first: a failed call must leave no process behind, whatever the error.
    await child.end();
    const exit = await exitWithin(exited, limits.graceMs);
    if (callerError) throw callerError.error;
    const overLimit =
      reason === 'cancelled' ? undefined : limitError(limitsHit(child, spec.policy, scratch), spec.policy);
    throw withStderr(overLimit ?? classify(error, reason, limits, exit), stderr.lines());
  } finally {
    spec.signal?.removeEventListener('abort', onCancel);
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
  }
}

function kernelPolicyFor(
  spec: CallSpec<Exclude<MethodName, 'initialize'>>,
  policy: CallPolicy,
  path: string,
  scratch: string,
  fd: number | undefined,
  identity: string | undefined,
) {
  const interpreter =
    fd === undefined || identity === undefined
      ? []
      : interpreterPaths(spec.executablePath, fd, identity, path);
  return kernelPolicyOf(policy, {
    packageDir: spec.packageDir,
    ...(spec.packageCopy === undefined ? {} : { packageCopy: spec.packageCopy }),
    interpreter,
    scratch,
  });
}

/** The open file's device, inode and change time: another file, or this one changed, has another. */
function fileIdentity(fd: number, known?: FileStamp): string {
  const stats = known ?? fstatSync(fd, { bigint: true });
  return `${stats.dev}:${stats.ino}:${stats.ctimeNs}`;
}

/** What the helper saw, and a scratch file stopped at the file-size limit (EFBIG, no signal). */
function limitsHit(child: CallProcess, policy: CallPolicy | undefined, scratch: string): string[] {
  const hit: string[] = [...(child.limitsHit ?? [])];
  if (
    policy &&
    child.limitsHit &&
    !hit.includes('file size') &&
    scratchAtFileLimit(scratch, policy.limits.fileSizeBytes)
  )
    hit.push('file size');
  return hit;
}

/** RESOURCE_LIMIT naming the limits the call hit, with their values. */
function limitError(
  hit: readonly string[] | undefined,
  policy: CallPolicy | undefined,
): ResourceLimitError | undefined {
  if (!hit || hit.length === 0) return undefined;
  const value = (name: string): string => {
    const limits = policy?.limits;
    if (!limits) return '';
    if (name === 'memory') return ` of ${formatBytes(limits.memoryBytes)}`;
    if (name === 'cpu') return ` of ${Math.ceil(limits.cpuMs / 1_000)}s CPU time`;
    if (name === 'file size') return ` of ${formatBytes(limits.fileSizeBytes)}`;
    if (name === 'processes') return ` of ${limits.processes}`;
    if (name === 'disk') return ` of ${formatBytes(limits.diskBytes)} (what it writes in its TMPDIR)`;
    return '';
  };
  const named = hit.map((name) => `the ${name} limit${value(name)}`).join(' and ');
  const gone = hit.includes('disk') ? ', the files it wrote are gone' : '';
  return new ResourceLimitError(
    `the call went over ${named}; its processes were killed${gone} (an admin raises it with \`plugin set\`)`,
    hit,
  );
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

interface KnownAnswers {
  memo: AnswerMemo;
  verified: WeakSet<object>;
  /** The bytes of the last initialize answer verified (the helper may send the method on seeing them again). */
  line?: Buffer | undefined;
}

/** Per trusted identity and grants: the initialize answers validated and verified so far. */
const knownByIdentity = new Map<string, KnownAnswers>();

function knownAnswers(identity: TrustedIdentity, grants: readonly Scope[]): KnownAnswers {
  const key = JSON.stringify([
    identity.id,
    identity.name,
    identity.version,
    identity.capabilities,
    identity.requestedScopes,
    grants,
  ]);
  let known = knownByIdentity.get(key);
  if (!known) {
    if (knownByIdentity.size >= 256) knownByIdentity.delete(knownByIdentity.keys().next().value!);
    known = { memo: new AnswerMemo(4), verified: new WeakSet() };
    knownByIdentity.set(key, known);
  }
  return known;
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

/** What ended a call's processes, as the containment in force does it. */
function killedText(): string {
  return containment().mechanism === 'subreaper'
    ? 'the plugin and every process it started were killed'
    : 'its process group was killed';
}

function classify(
  error: unknown,
  reason: 'timeout' | 'cancelled' | undefined,
  limits: SupervisorLimits,
  exit: { code: number | null; signal: string | null } | undefined,
): SwitchyardError {
  if (reason === 'cancelled') return new CallCancelledError(`the call was cancelled; ${killedText()}`);
  if (reason === 'timeout')
    return new PluginTimeoutError(`no response within ${limits.callTimeoutMs} ms; ${killedText()}`);
  if (error instanceof SwitchyardError) return error;
  return hostErrorOf(error, exit);
}

function withStderr(error: SwitchyardError, lines: string[]): CallError {
  return Object.assign(error, { stderr: lines });
}

/** Rejects when `signal` aborts; a rejection nobody awaits any more (the race was won) is not unhandled. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_resolve, reject) => {
    const abort = () => reject(new RequestAbortedError('aborted'));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
  aborted.catch(() => {});
  return aborted;
}

/** The exit, or undefined when the process is still running after `ms`; no timer outlives it. */
async function exitWithin<T>(exited: Promise<T>, ms: number): Promise<T | undefined> {
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
