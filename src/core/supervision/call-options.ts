// What a caller asks of one plugin call (CallSpec) and what it gets (CallOutcome), and the one
// normalised form of the ask every step of the call reads (SupervisedCall): defaults filled in
// and confinement as one object, once, where the call enters (supervisor.ts).
import type { Scope } from '@switchyard/plugin-sdk/protocol';
import type { MethodName, MethodParams, MethodResult } from '@switchyard/plugin-sdk/host';
import type { BigIntStats } from 'node:fs';
import type { SwitchyardError } from '../platform/index.js';
import type { CallPolicy } from './call-policy.js';

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
export type FileStamp = Pick<BigIntStats, 'dev' | 'ino' | 'ctimeNs'>;

/** Any method but initialize, which the supervisor sends itself. */
export type CallMethod = Exclude<MethodName, 'initialize'>;

export interface CallSpec<M extends CallMethod> {
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

/** How the kernel confines the call: its policy (none: signals only), and whether all of it is required. */
export interface Confinement {
  policy: CallPolicy | undefined;
  /** Refuse to start (ConfinementUnavailableError) unless every mechanism is in force. */
  required: boolean;
}

/** A call as every step reads it: the caller's spec with its defaults, and when it began. */
export interface SupervisedCall<M extends CallMethod> extends Omit<
  CallSpec<M>,
  'limits' | 'policy' | 'requireConfinement'
> {
  limits: SupervisorLimits;
  confinement: Confinement;
  /** performance.now() when the call began. */
  begun: number;
}

export function normaliseCall<M extends CallMethod>(spec: CallSpec<M>): SupervisedCall<M> {
  const { limits, policy, requireConfinement, ...rest } = spec;
  return {
    ...rest,
    limits: { ...DEFAULT_LIMITS, ...limits },
    confinement: { policy, required: requireConfinement === true },
    begun: performance.now(),
  };
}
