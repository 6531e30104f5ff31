// The frame protocol between the host and the native spawn helper (native/spawner.c, native/keeper.h):
// every frame is u32 length, u32 call id, u8 type, then its payload. What a frame's bytes are lives
// here, both ways; what the host does with them lives in spawner.ts (the helper) and helper-call.ts
// (one call).
import {
  FRAME_HEADER as HEADER,
  LIMIT_NAMES,
  POLICY,
  SPAWN_CONFINE,
  SPAWN_EXEC_FD,
  SPAWN_FILES,
  SPAWN_ISOLATE,
  SPAWN_LIMITS,
  SPAWN_NO_NETWORK,
  SPAWN_REQUIRE_CONFINEMENT,
} from './native-protocol.js';
import { SpawnError } from './call-process.js';

// The helper's constants come from their one table (native/protocol.json), generated for both sides.
export { H, HELPER_EXITS, LIMIT_NAMES, S } from './native-protocol.js';

export type LimitName = (typeof LIMIT_NAMES)[keyof typeof LIMIT_NAMES];

export function limitNames(bits: number): LimitName[] {
  return Object.entries(LIMIT_NAMES)
    .filter(([bit]) => (bits & Number(bit)) !== 0)
    .map(([, name]) => name);
}

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Landlock signal scoping for the plugin where the kernel has it (native helper only). */
  confine?: boolean;
  /**
   * A descriptor (of this process) of the verified executable: the helper
   * starts the plugin from it (execveat), argv[0] stays `file` (native helper only).
   */
  executableFd?: number;
  /** Kernel confinement beyond signal scoping (native helper only; needs `confine`). */
  policy?: KernelPolicy | undefined;
  /** Refuse to start when the kernel lacks Landlock or seccomp (worker --require-confinement). */
  requireConfinement?: boolean;
  /**
   * Its own IPC and mount namespaces, and with a policy's `tmp` its tmpfs of `diskBytes`
   * (native/isolate.h); only where the helper said it can (`isolation`), else ignored.
   */
  isolate?: boolean;
}

/** What the keeper applies to one call (native/confine.h, native/limits.h). */
export interface KernelPolicy {
  /** Landlock file rules: read + execute beneath `read`, everything beneath `write`, nothing else. */
  files?: { read: readonly string[]; write: readonly string[] };
  network: 'allow' | 'none';
  limits?: {
    memoryBytes: number;
    cpuSeconds: number;
    fileSizeBytes: number;
    openFiles: number;
    processes: number;
    /** The size of the call's tmpfs on `tmp` (an isolated call). */
    diskBytes: number;
  };
  /** The call's TMPDIR, where an isolated call gets its tmpfs; its parent is the scratch directory. */
  tmp?: string;
}

/** One frame: header and payload. */
export function encodeFrame(id: number, type: number, payload?: Buffer): Buffer {
  const length = payload?.length ?? 0;
  const frame = Buffer.allocUnsafe(HEADER + length);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(id, 4);
  frame[8] = type;
  payload?.copy(frame, HEADER);
  return frame;
}

/** Cuts the helper's output into frames, however its chunks fall. */
export class FrameReader {
  #rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onFrame: (id: number, type: number, payload: Buffer) => void): void {
    const data = this.#rest.length > 0 ? Buffer.concat([this.#rest, chunk]) : chunk;
    let at = 0;
    while (data.length - at >= HEADER) {
      const length = data.readUInt32LE(at);
      if (data.length - at < HEADER + length) break;
      onFrame(data.readUInt32LE(at + 4), data[at + 8]!, data.subarray(at + HEADER, at + HEADER + length));
      at += HEADER + length;
    }
    this.#rest = data.subarray(at);
  }
}

/** What the helper said of this host in HELLO. */
export interface Hello {
  /** The kernel's Landlock ABI (0: none). */
  landlockAbi: number;
  /** Whether the helper can install its seccomp filter. */
  seccomp: boolean;
  /** The limits the helper can enforce on this host. */
  enforceableLimits: LimitName[];
}

export function decodeHello(payload: Buffer): Hello {
  return {
    landlockAbi: payload.readUInt32LE(0),
    seccomp: payload.length >= 8 && payload.readUInt32LE(4) === 1,
    enforceableLimits: payload.length >= 12 ? limitNames(payload.readUInt32LE(8)) : [],
  };
}

/** STDIN_LAST: u32 answers, then the last bytes for stdin. */
export function stdinLastPayload(answers: number, chunk: Buffer): Buffer {
  const payload = Buffer.allocUnsafe(4 + chunk.length);
  payload.writeUInt32LE(answers, 0);
  chunk.copy(payload, 4);
  return payload;
}

/** THEN: u32 answers, u32 length of the first line, the first line, the request. */
export function thenPayload(answers: number, firstLine: Buffer, request: Buffer): Buffer {
  const payload = Buffer.allocUnsafe(8 + firstLine.length + request.length);
  payload.writeUInt32LE(answers, 0);
  payload.writeUInt32LE(firstLine.length, 4);
  firstLine.copy(payload, 8);
  request.copy(payload, 8 + firstLine.length);
  return payload;
}

/** The SPAWN flags of a request; isolated only where the helper can (`isolation`). */
export function spawnFlags(request: SpawnRequest, isolation: boolean): number {
  const policy = request.confine ? request.policy : undefined;
  return (
    (request.confine ? SPAWN_CONFINE : 0) |
    (request.confine && request.requireConfinement ? SPAWN_REQUIRE_CONFINEMENT : 0) |
    (request.executableFd === undefined ? 0 : SPAWN_EXEC_FD) |
    (policy?.files ? SPAWN_FILES : 0) |
    (policy?.network === 'none' ? SPAWN_NO_NETWORK : 0) |
    (policy?.limits ? SPAWN_LIMITS : 0) |
    (request.confine && request.isolate && isolation ? SPAWN_ISOLATE : 0)
  );
}

/**
 * SPAWN: u32 argc, u32 envc, u32 flags, u32 policyc, then NUL-terminated path, cwd,
 * argv (argv[0] = path), NAME=value entries and the policy's entries.
 */
export function encodeSpawn(request: SpawnRequest, flags: number, policy: KernelPolicy | undefined): Buffer {
  const argv = [request.file, ...request.args];
  const env = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  // By descriptor: the helper (this process's child, same user) reopens it through /proc: the same open file.
  const path =
    request.executableFd === undefined ? request.file : `/proc/${process.pid}/fd/${request.executableFd}`;
  const entries = encodedPolicy(policy);
  const strings = [path, request.cwd, ...argv, ...env];
  for (const text of strings) {
    if (text.includes('\0')) throw new SpawnError('an argument or environment value holds a NUL byte');
  }
  const body = Buffer.from(`${strings.join('\0')}\0`, 'utf8');
  const head = Buffer.allocUnsafe(16);
  head.writeUInt32LE(argv.length, 0);
  head.writeUInt32LE(env.length, 4);
  head.writeUInt32LE(flags, 8);
  head.writeUInt32LE(entries.count, 12);
  return Buffer.concat([head, body, entries.bytes]);
}

/** A policy's entries encoded once per policy object (call-policy.ts hands the same one to a plugin's calls). */
const encodedPolicies = new WeakMap<KernelPolicy, { bytes: Buffer; count: number }>();
const NO_POLICY = { bytes: Buffer.alloc(0), count: 0 };

function encodedPolicy(policy: KernelPolicy | undefined): { bytes: Buffer; count: number } {
  if (!policy) return NO_POLICY;
  let encoded = encodedPolicies.get(policy);
  if (!encoded) {
    const entries = policyEntries(policy);
    if (entries.some((text) => text.includes('\0')))
      throw new SpawnError('an argument or environment value holds a NUL byte');
    encoded = {
      bytes: Buffer.from(entries.map((entry) => `${entry}\0`).join(''), 'utf8'),
      count: entries.length,
    };
    // Only a frozen policy cannot change after it was encoded.
    if (Object.isFrozen(policy)) encodedPolicies.set(policy, encoded);
  }
  return encoded;
}

function policyEntries(policy: KernelPolicy): string[] {
  const entries = [
    ...(policy.files?.read ?? []).map((path) => `${POLICY.read}${path}`),
    ...(policy.files?.write ?? []).map((path) => `${POLICY.write}${path}`),
  ];
  const limits = policy.limits;
  if (limits) {
    entries.push(
      `${POLICY.memory}${limits.memoryBytes}`,
      `${POLICY.cpu}${limits.cpuSeconds}`,
      `${POLICY.fsize}${limits.fileSizeBytes}`,
      `${POLICY.nofile}${limits.openFiles}`,
      `${POLICY.nproc}${limits.processes}`,
      `${POLICY.disk}${limits.diskBytes}`,
    );
  }
  if (policy.tmp) entries.push(`${POLICY.tmp}${policy.tmp}`);
  return entries;
}
