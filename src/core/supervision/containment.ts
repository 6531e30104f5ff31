// How a plugin call's processes are started and contained (docs/PROTOCOL.md §9.3,
// §9.5). On Linux with the native helper built: a per-call child subreaper
// with parent-death signals (src/core/supervision/spawner.ts) — nothing of a call outlives
// it or this process. Elsewhere, without the helper, or with
// SWITCHYARD_SPAWNER=process-group: execa in a new process group, killed with
// SIGKILL to the group plus tree-kill while the leader runs; a descendant that
// leaves the group after its parent exited can survive there.
// Why a helper: docs/adr/0002-subreaper-spawn-helper.md.
import { execFileSync } from 'node:child_process';
import { accessSync, constants as fs } from 'node:fs';
import { execa } from 'execa';
import treeKill from 'tree-kill';
import { ConfinementUnavailableError, readEnv, type EnvironmentName } from '../platform/index.js';
import { stdioWithoutStrays } from './inherited-fds.js';
import {
  HELPER_PATH,
  SpawnError,
  Spawner,
  type CallProcess,
  type ProcessExit,
  type SpawnRequest,
} from './spawner.js';

export type { CallProcess, ProcessExit, SpawnRequest } from './spawner.js';
export { SpawnError } from './spawner.js';

export interface Containment {
  mechanism: 'subreaper' | 'process-group';
  detail: string;
  /** Each mechanism in force for this process's calls (PROTOCOL §9.5). */
  enforced: string[];
  /** Each mechanism not in force here, with why. */
  missing: string[];
}

export const FORCE_ENV: EnvironmentName = 'SWITCHYARD_SPAWNER';
/** `off`: no kernel confinement of plugin calls (the helper's subreaper containment stays). */
export const CONFINEMENT_ENV: EnvironmentName = 'SWITCHYARD_CONFINEMENT';
/** `off`: confined calls without their own namespaces (to measure their cost, or rule them out). */
export const NAMESPACES_ENV: EnvironmentName = 'SWITCHYARD_CALL_NAMESPACES';

function confinementWanted(): boolean {
  return readEnv(CONFINEMENT_ENV) !== 'off';
}

function namespacesWanted(): boolean {
  return readEnv(NAMESPACES_ENV) !== 'off';
}

/**
 * The running helpers, one per kind of call: confined without network, confined with it, and
 * not confined (SWITCHYARD_CONFINEMENT=off). Each confined one carries its call's seccomp
 * filter from its start, so no call installs one.
 */
type HelperKind = 'no-network' | 'network' | 'unconfined';
const spawners = new Map<HelperKind, Spawner>();
/** Why the helper could not be started in this process (then every call falls back). */
let helperFailure: string | undefined;

/** The containment plugin calls of this process get (for `plugin show`, /healthz, --require-confinement). */
export function containment(): Containment {
  const unavailable = helperUnavailable();
  if (unavailable) {
    return {
      mechanism: 'process-group',
      detail:
        `${unavailable}; each call runs in its own process group, killed as a group (and as a tree while ` +
        'its leader runs): a descendant that leaves the group after its parent exited, or the whole call ' +
        'after a kill -9 of the worker, can survive',
      enforced: [
        'a process group per call, killed at its end',
        'start from a read-only verified copy of the package',
        'a private TMPDIR per call',
      ],
      missing: [
        `subreaper containment (${unavailable})`,
        'signal scoping',
        'file access rules',
        'network rules',
        'resource limits',
        'per-call IPC and mount namespaces',
        'disk budget',
        'read-only file system outside the granted write paths',
      ],
    };
  }
  const { enforced, missing } = kernelMechanisms();
  return {
    mechanism: 'subreaper',
    detail:
      `native helper ${HELPER_PATH}: each call under its own child subreaper with parent-death signals; ` +
      'every descendant (setsid, double fork, orphans) is killed with the call and with the worker',
    enforced: [
      'subreaper containment: every descendant dies with the call and with the worker',
      'start from a read-only verified copy of the package',
      ...enforced,
    ],
    missing,
  };
}

interface Probe {
  landlockAbi: number;
  seccomp: boolean;
  capabilitiesDroppable: boolean;
  /** Per-call IPC and mount namespaces (and so the disk budget); else why not. */
  namespaces: boolean;
  namespacesProblem?: string;
  limits: { memory?: string; processes?: string };
  /** Why the helper could not use a cgroup controller (`limits-cgroup-<name> unavailable: …`). */
  cgroupProblems: { memory?: string; pids?: string };
}

/** Each mechanism in force, and each not, with what it means. */
interface Mechanisms {
  enforced: string[];
  missing: string[];
}

/** What the kernel gives this host's calls under the helper, each with what it means. */
function kernelMechanisms(): Mechanisms {
  if (!confinementWanted()) {
    return {
      enforced: ['a private TMPDIR per call'],
      missing: [
        `kernel confinement (${CONFINEMENT_ENV}=off): no signal scoping (a plugin that kills or stops its keeper ` +
          'is still ended by the helper, a subreaper too, and by the host), no file access rules, no network ' +
          "rules, no resource limits — a plugin can read and write what the worker's user can, open connections " +
          "and reach the host's Redis",
      ],
    };
  }
  const probe = probeHelper();
  if (!probe)
    return { enforced: [], missing: ['kernel confinement unknown (the helper could not be asked)'] };
  const mechanisms: Mechanisms = { enforced: ['a private TMPDIR per call'], missing: [] };
  kernelRules(probe, mechanisms);
  limitMechanisms(probe, mechanisms);
  namespaceMechanisms(probe, mechanisms);
  return mechanisms;
}

/** Landlock, seccomp and capabilities: what a call may reach and do. */
function kernelRules(probe: Probe, { enforced, missing }: Mechanisms): void {
  const abi = probe.landlockAbi;
  const landlock = (what: string, needs: number) =>
    abi >= needs
      ? enforced.push(`${what} (Landlock ABI ${abi})`)
      : missing.push(`${what} (this kernel has Landlock ABI ${abi}, it needs ${needs})`);
  landlock('signal scoping: the plugin cannot signal or ptrace its keeper, the helper or the worker', 6);
  landlock(
    'file access rules: the package, the system directories and its interpreter read-only, the project as granted, its TMPDIR; nothing else',
    6,
  );
  landlock(
    'network rules: no TCP bind or connect, no abstract unix socket, unless `plugin set --network allow`',
    6,
  );
  if (probe.seccomp)
    enforced.push(
      "seccomp: no new socket without network, never a unix socket by path (the host's Redis; no datagram socketpair, whose end could send to one), no io_uring, no priority or limit changes of other processes, no kernel keyring, no new namespace (no user namespace, so no capability in one)",
    );
  else missing.push('seccomp filter (not available on this kernel or architecture)');
  if (probe.capabilitiesDroppable)
    enforced.push(
      'no capabilities: a plugin started as root has none (no kernel modules, device nodes, raw disks or BPF), nor gains any by exec',
    );
  else
    missing.push(
      'no capabilities for good: the worker lacks CAP_SETPCAP, so a plugin started as root drops its capabilities but an exec gives them back',
    );
}

/** Resource limits: rlimits always, memory and processes where a cgroup or rlimit binds. */
function limitMechanisms(probe: Probe, { enforced, missing }: Mechanisms): void {
  enforced.push('resource limits: CPU time, file size, open files (rlimits)');
  const memory = probe.limits.memory ?? 'none';
  const why = (problem: string | undefined) => (problem ? `; ${problem}` : '');
  if (memory === 'none')
    missing.push(`memory limit (no memory cgroup, no RLIMIT_AS${why(probe.cgroupProblems.memory)})`);
  else enforced.push(`memory limit (${memory})`);
  const processes = probe.limits.processes ?? 'none';
  if (processes === 'none')
    missing.push(
      `process limit (needs a pids cgroup the worker can create; RLIMIT_NPROC does not bind root${why(probe.cgroupProblems.pids)})`,
    );
  else enforced.push(`process limit (${processes})`);
}

/** Per-call namespaces: private IPC, the TMPDIR's tmpfs (the disk budget), a read-only file system. */
function namespaceMechanisms(probe: Probe, { enforced, missing }: Mechanisms): void {
  const namespacesOff = !namespacesWanted() ? `${NAMESPACES_ENV}=off` : undefined;
  if (probe.namespaces && !namespacesOff) {
    enforced.push(
      'per-call IPC namespace: SysV shared memory, message queues, semaphores and POSIX message queues are private to the call and gone with it',
      'per-call mount namespace: the TMPDIR is a tmpfs of the disk budget (`plugin set --disk`), gone with the call; the disk budget does not cover an operation writing the project root, nor --allow-write directories',
      'read-only file system outside the granted write paths: everything else is mounted read-only and nosuid in the call, so no chmod, chown, utimes or extended attribute of a file outside them (which Landlock does not govern)',
    );
  } else {
    const why = namespacesOff ?? probe.namespacesProblem ?? 'unknown';
    missing.push(
      `per-call IPC namespace (${why}): SysV IPC and POSIX message queues are shared with other calls and the worker's user`,
      `disk budget (${why}): what a call writes in its TMPDIR is bounded only per file (--file-size)`,
      `read-only file system outside the granted write paths (${why}): a plugin can change the mode, owner and times of files its user owns (a plugin run by root: any root-owned file), which Landlock does not govern`,
    );
  }
}

/** True when every mechanism is in force (worker --require-confinement). */
export function fullyConfined(): { ok: boolean; missing: string[] } {
  const { missing } = containment();
  return { ok: missing.length === 0, missing };
}

let probed: Probe | undefined;

/** `sy-spawner --probe`, once per process. */
function probeHelper(): Probe | undefined {
  if (probed !== undefined) return probed;
  try {
    const said = execFileSync(HELPER_PATH, ['--probe'], { encoding: 'utf8' });
    const value = (name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(said)?.[1];
    const abi = value('landlock-abi');
    if (abi === undefined) return undefined;
    const memory = value('limits-memory');
    const processes = value('limits-processes');
    const problem = (name: string) =>
      new RegExp(`^limits-cgroup-${name} unavailable: (.+)$`, 'm').exec(said)?.[1];
    const [memoryProblem, pidsProblem] = [problem('memory'), problem('pids')];
    const namespaces = /^namespaces (\S+)(?: (.+))?$/m.exec(said);
    probed = {
      landlockAbi: Number(abi),
      seccomp: value('seccomp') === '1',
      // An older helper build says nothing: it drops what it can.
      capabilitiesDroppable: value('capabilities-droppable') !== '0',
      namespaces: namespaces?.[1] === '1',
      ...(namespaces?.[1] === '1'
        ? {}
        : { namespacesProblem: namespaces?.[2] ?? 'the helper is of a build without them' }),
      limits: { ...(memory ? { memory } : {}), ...(processes ? { processes } : {}) },
      cgroupProblems: {
        ...(memoryProblem ? { memory: memoryProblem } : {}),
        ...(pidsProblem ? { pids: pidsProblem } : {}),
      },
    };
  } catch {
    // not runnable: said as unknown
  }
  return probed;
}

function helperUnavailable(): string | undefined {
  const forced = readEnv(FORCE_ENV);
  if (forced === 'process-group') return `${FORCE_ENV}=process-group is set`;
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (helperFailure) return helperFailure;
  // A running helper was found and started: no access() on every call.
  if (spawners.size > 0) return undefined;
  try {
    accessSync(HELPER_PATH, fs.X_OK);
  } catch {
    return `the native helper is not built (${HELPER_PATH}; needs a C compiler at npm run build)`;
  }
  return undefined;
}

/**
 * Starts the plugin process of one call under the containment in force;
 * SpawnError when it cannot start (from here, or from `started`). Through the
 * helper it returns before the process runs: stdin written meanwhile is sent
 * with the spawn request.
 */
export async function startCallProcess(request: SpawnRequest): Promise<CallProcess> {
  if (request.requireConfinement) {
    const { ok, missing } = fullyConfined();
    if (!ok)
      throw new ConfinementUnavailableError(
        `this worker requires kernel confinement (--require-confinement) and cannot provide: ${missing.join('; ')}; nothing was started`,
      );
  }
  if (helperUnavailable()) return startInProcessGroup(request);
  const confine = confinementWanted();
  const kind: HelperKind = !confine
    ? 'unconfined'
    : request.policy?.network === 'none'
      ? 'no-network'
      : 'network';
  let helper = spawners.get(kind);
  if (!helper) {
    const filter = kind === 'unconfined' ? undefined : kind === 'no-network' ? 'none' : 'allow';
    helper = new Spawner(
      HELPER_PATH,
      (gone) => {
        if (spawners.get(kind) === gone) spawners.delete(kind);
      },
      filter,
    );
    spawners.set(kind, helper);
  }
  try {
    await helper.started;
  } catch (error) {
    helperFailure = `the native helper could not start: ${(error as Error).message}`;
    spawners.delete(kind);
    return startInProcessGroup(request);
  }
  return helper.spawn({
    ...request,
    confine,
    isolate: confine && namespacesWanted(),
    ...(confine ? {} : { policy: undefined }),
  });
}

/** The fallback: execa, detached (own process group), group-killed at the end. */
async function startInProcessGroup(request: SpawnRequest): Promise<CallProcess> {
  const child = execa(request.file, [...request.args], {
    cwd: request.cwd,
    env: request.env,
    extendEnv: false,
    detached: true,
    // Pipes on 0–2; a descriptor this process inherited without close-on-exec is not passed on.
    // (execa's types omit a descriptor number beyond stderr; node's spawn takes it.)
    stdio: stdioWithoutStrays() as ['pipe', 'pipe', 'pipe'],
    buffer: false,
    reject: false,
    encoding: 'buffer',
    cleanup: true,
  });
  // The result promise is awaited only for its settle; errors arrive as events.
  void child.catch(() => {});
  let hasExited = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      hasExited = true;
      resolve({ code, signal });
    });
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const failed = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (error) => resolve(error));
  });
  if (failed || child.pid === undefined) throw new SpawnError(failed?.message ?? 'no pid');
  const pid = child.pid;
  return {
    started: Promise.resolve(),
    pid,
    stdin: child.stdin!,
    stdout: child.stdout!,
    stderr: child.stderr!,
    exited,
    end: () => killGroup(pid, !hasExited),
  };
}

/**
 * SIGKILL to the negative pid kills the group, grandchildren included. When
 * the leader still runs, tree-kill also reaches descendants that left the group.
 */
async function killGroup(pid: number, leaderMayRun: boolean): Promise<void> {
  if (leaderMayRun) await new Promise<void>((resolve) => treeKill(pid, 'SIGKILL', () => resolve()));
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone
  }
}
