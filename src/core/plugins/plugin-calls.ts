// The verify-then-call pipeline (PROTOCOL §9.2–9.7): re-verify the package on
// this machine's disk, run one supervised call, and leave its trace: health
// and logs through PluginStore, call metrics, and a package found changed or
// broken marked so everywhere.
import { hostname } from 'node:os';
import type { BigIntStats } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { MAX_MANIFEST_BYTES, type Scope } from '@switchyard/plugin-sdk/protocol';
import { checkExecutable, PackageFileError, readManifestBytes } from '@switchyard/plugin-sdk/host';
import type { MethodName, MethodParams } from '@switchyard/plugin-sdk/host';
import { recordCall } from './call-metrics.js';
import {
  inOrder,
  CallCancelledError,
  FingerprintChangedError,
  PackageInvalidError,
  PluginCallError,
  SpawnFailedError,
  TrustRequiredError,
} from '../platform/index.js';
import { hashExecutable } from './fingerprint.js';
import { intactFingerprint } from './intact-package.js';
import { changedPaths, readPackageTree, reviewedPart, type PackageTree } from './package-tree.js';
import { verifiedCopy } from './package-copy.js';
import type { Keys } from '../redis/index.js';
import { changedHostsOf, recordsUnhealthy, untrustedPluginMessage } from './plugin-rules.js';
import type { HealthState, LogEntry, PluginRecord, PluginStore } from './plugin-store.js';
import { boundedMessage } from '../safety/index.js';
import { superviseCall, LiveStderr, StderrBudget } from '../supervision/index.js';
import { DEFAULT_CALL_CAP_MS, limitFor, timeLimitsOf } from './time-limits.js';
import { confinementPolicyOf } from './confinement-settings.js';
import { PluginCaps, hasCaps, type CapHold } from './plugin-caps.js';
import type { SlotCall, WorkerSlots } from './worker-slots.js';
import type { CallPolicy, CallOutcome, SupervisorLimits } from '../supervision/index.js';

export interface CallOptions {
  signal?: AbortSignal;
  /** A shorter limit than the plugin's (an operation's `--timeout`). */
  timeoutMs?: number;
  /** The operation this call runs: its stderr lines are also kept under it. */
  operationId?: string;
  beforeSend?: () => Promise<void>;
  onSpawn?: (pid: number) => void;
  /** Told once when the call waits for the plugin's caps (plugin-caps.ts), with why. */
  onWaiting?: (reason: string) => void;
  /** Told when a call that waited for the caps starts. */
  onAdmitted?: () => void;
  /** The batch this call inspects for (what a worker's slot shows). */
  batchId?: string;
}

/**
 * How this process runs every plugin call, from the flags it started with: built once where
 * they enter (`switchyard worker`) and handed down whole, never redeclared field by field.
 */
export interface HostCallPolicy {
  /** `callTimeoutMs` caps every call (worker --call-timeout); the plugin's limits apply below it. */
  limits: Partial<SupervisorLimits>;
  /** Refuse every call unless all kernel confinement is in force (worker --require-confinement). */
  requireConfinement: boolean;
}

/** A process started without those flags (the CLI, the api, the scheduler). */
export const DEFAULT_HOST_CALL_POLICY: HostCallPolicy = { limits: {}, requireConfinement: false };

export interface PluginCallsOptions {
  /** Who acts when a call finds tampering (e.g. `worker:<host>:<pid>`). */
  processActor: string;
  callPolicy: HostCallPolicy;
  /** Where the verified read-only copies of packages are kept (<data-dir>/run/packages). */
  copiesDir: string;
}

type CallMethod = Exclude<MethodName, 'initialize'>;

export class PluginCalls {
  /** Installation-wide caps; a worker sets their lease to its job lock's duration. */
  readonly caps: PluginCaps;
  /** A worker's slot board (worker-slots.ts): what each of its calls runs, for `switchyard queue`. */
  slots: WorkerSlots | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly store: PluginStore,
    private readonly options: PluginCallsOptions,
  ) {
    this.caps = new PluginCaps(redis, keys);
  }

  /** Verifies the package on disk, then runs one supervised call with the record's grants and records its outcome. */
  async call<M extends CallMethod>(
    record: PluginRecord,
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    // The usual case: the executable and plugin.json intact, their fingerprint cached.
    const intact = record.trustedFingerprint ? intactFingerprint(record) : undefined;
    if (intact === undefined || intact !== record.trustedFingerprint) {
      try {
        await this.verifyOnDisk(record);
      } catch (error) {
        await this.#recordFailure(record.id, error);
        throw error;
      }
    }
    return this.callVerified(record, record.grantedScopes, method, params, options);
  }

  /**
   * One supervised call of a package the caller has just verified, with these
   * grants; its outcome recorded. Every file of the package is checked first
   * (the owner rule and the trusted tree digest), and the call runs from the
   * verified read-only copy of that tree (package-copy.ts).
   */
  async callVerified<M extends CallMethod>(
    record: PluginRecord,
    grants: Scope[],
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    let copy: string;
    try {
      copy = await this.#reviewedCopy(record);
    } catch (error) {
      recordCall(this.redis, this.keys, record.id, method, 0, false);
      await this.#recordFailure(record.id, error, options.operationId);
      throw error;
    }
    return this.#callFrom(copy, record, grants, method, params, options);
  }

  /**
   * The directory of the read-only copy of the package as it was trusted:
   * every package file on this disk passes the owner rule and the tree digest
   * equals the trusted one (else the plugin is marked unavailable, or changed
   * and disabled everywhere, before anything runs).
   */
  async #reviewedCopy(record: PluginRecord): Promise<string> {
    if (!record.trustedTreeDigest || !record.trustedFiles)
      throw new TrustRequiredError(
        `plugin ${record.id} was trusted before every file of a package was reviewed; review it with \`plugin show ${record.id}\` (it lists every file) and trust it again`,
      );
    const trustedFiles = record.trustedFiles ?? [];
    const reviewedPaths = new Set(trustedFiles.map((entry) => entry.path));
    const read = await readPackageTree(record.packageDir, {
      hashOnly: reviewedPaths,
      reviewed: reviewedPaths,
    });
    const reviewed = read.tree ? reviewedPart(read.tree, trustedFiles) : undefined;
    // Changed files first: whether or not it also breaks a rule now, the plugin is disabled everywhere —
    // unless only modes changed and the rule says what to fix (chmod it back and it is the reviewed tree).
    const onlyModes =
      !read.ok && reviewed && changedPaths(trustedFiles, reviewed.entries, { modes: false }).length === 0;
    if (reviewed && reviewed.digest !== record.trustedTreeDigest && !onlyModes) {
      const files = changedPaths(trustedFiles, reviewed.entries);
      await this.#markChanged(record, record.fingerprint ?? '', { tree: reviewed.digest, files });
      throw new FingerprintChangedError(
        `plugin ${record.id}: files of its package changed on ${hostname()} since it was trusted (${files.join(', ') || 'unknown files'}); it was disabled and must be reviewed again${read.ok ? '' : `; besides, ${read.error}`}`,
        record.trustedFingerprint ?? '',
        record.fingerprint ?? undefined,
      );
    }
    if (!read.ok) {
      await this.#markUnavailable(record, read.error);
      throw new PackageInvalidError(`plugin ${record.id}: ${read.error}; the call was refused`);
    }
    const tree = reviewed!;
    try {
      return await verifiedCopy(this.options.copiesDir, record.packageDir, tree);
    } catch (error) {
      throw new SpawnFailedError(
        `plugin ${record.id}: could not make the verified copy of its package in ${this.options.copiesDir}: ${(error as Error).message}; nothing was started`,
      );
    }
  }

  /** Every file of the package as it is on this disk now; a package that breaks a rule is marked unavailable. */
  async treeOnDisk(record: PluginRecord): Promise<PackageTree> {
    const read = await readPackageTree(record.packageDir);
    if (read.ok) return read.tree;
    await this.#markUnavailable(record, read.error);
    throw new PackageInvalidError(`plugin ${record.id}: ${read.error}; the call was refused`);
  }

  /** The call, started by path from the verified copy `copy` of the package. */
  async #callFrom<M extends CallMethod>(
    copy: string,
    record: PluginRecord,
    grants: Scope[],
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    const slot = this.slots?.start({
      pluginId: record.id,
      method,
      projectId: (params as { project?: { id?: string } }).project?.id,
      batchId: options.batchId,
      operationId: options.operationId,
    });
    try {
      const hold = await this.#admit(record, options, slot);
      try {
        return await this.#supervised(copy, record, grants, method, params, options);
      } finally {
        await hold?.release();
      }
    } finally {
      slot?.end();
    }
  }

  /**
   * Waits for the plugin's caps, if it has any (told through onWaiting and
   * the slot); a signal aborted while waiting ends the call before anything
   * started, as cancelled.
   */
  async #admit(record: PluginRecord, options: CallOptions, slot?: SlotCall): Promise<CapHold | undefined> {
    if (!hasCaps(record.caps)) return undefined;
    let waited = false;
    const hold = await this.caps.admit(record.id, record.caps, {
      ...(options.signal ? { signal: options.signal } : {}),
      onWaiting: (reason) => {
        waited = true;
        slot?.waiting(reason);
        options.onWaiting?.(reason);
      },
    });
    if (!hold)
      throw new CallCancelledError(
        `the call of plugin ${record.id} was stopped while it waited for its caps; nothing was started`,
      );
    if (waited) {
      slot?.running();
      options.onAdmitted?.();
    }
    return hold;
  }

  async #supervised<M extends CallMethod>(
    copy: string,
    record: PluginRecord,
    grants: Scope[],
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    const started = performance.now();
    const measure = (ok: boolean) =>
      recordCall(this.redis, this.keys, record.id, method, (performance.now() - started) / 1_000, ok);
    // Live: every line to the operation's log (it keeps the newest), a bounded share to the plugin's.
    const budget = new StderrBudget();
    const live = new LiveStderr((lines) =>
      this.store.appendCallLogs(record.id, stderrEntries(budget.take(lines)), {
        ...(options.operationId ? { operationId: options.operationId, operation: stderrEntries(lines) } : {}),
      }),
    );
    const closeLive = async () => {
      await live.close();
      const rest = budget.end(
        options.operationId ? `op logs ${options.operationId} has its newest lines` : undefined,
      );
      await this.store.appendCallLogs(record.id, stderrEntries(rest)).catch(() => {});
    };
    try {
      const outcome = await superviseCall({
        executablePath: join(copy, record.executable),
        packageCopy: copy,
        arguments: record.arguments,
        packageDir: record.packageDir,
        identity: record,
        grants,
        method,
        params,
        limits: {
          ...this.options.callPolicy.limits,
          callTimeoutMs: this.#timeoutOf(record, method, options),
        },
        onStderr: (chunk) => live.push(chunk),
        policy: callPolicyOf(record, method, params),
        requireConfinement: this.options.callPolicy.requireConfinement,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.beforeSend ? { beforeSend: options.beforeSend } : {}),
        ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
      });
      const status =
        method === 'plugin.health'
          ? (outcome.result as { status: HealthState }).status
          : ('healthy' as const);
      measure(true);
      await closeLive();
      await this.store.recordOutcome(record.id, { health: status }, []);
      return outcome;
    } catch (error) {
      measure(false);
      await closeLive();
      await this.#recordFailure(record.id, error, options.operationId);
      throw error;
    }
  }

  /** The plugin's limit for this method, shortened by the request, capped by this process. */
  #timeoutOf(record: PluginRecord, method: CallMethod, options: CallOptions): number {
    return Math.min(
      limitFor(timeLimitsOf(record.timeLimits), method),
      options.timeoutMs ?? Infinity,
      this.options.callPolicy.limits.callTimeoutMs ?? DEFAULT_CALL_CAP_MS,
    );
  }

  /**
   * PROTOCOL §9.2 on this machine's disk: executable rules and the fingerprint
   * must equal the trusted one. A mismatch disables the plugin everywhere.
   */
  async verifyOnDisk(record: PluginRecord): Promise<string> {
    const trusted = record.trustedFingerprint;
    if (!trusted) throw new TrustRequiredError(untrustedPluginMessage(record.id));
    const current = await this.fingerprintOnDisk(record);
    if (current !== trusted) {
      await this.#markChanged(record, current);
      throw new FingerprintChangedError(
        `plugin ${record.id} changed on disk (trusted ${trusted}, now ${current}); it was disabled and must be reviewed again`,
        trusted,
        current,
      );
    }
    return current;
  }

  /** The package's fingerprint as it is on disk now; a package that breaks the rules is marked unavailable. */
  async fingerprintOnDisk(record: PluginRecord, onStats?: (stats: BigIntStats) => void): Promise<string> {
    // The usual case (nothing wrong, fingerprint cached) without a thread-pool hop per check.
    const intact = intactFingerprint(record, onStats);
    if (intact !== undefined) return intact;
    // Independent reads, issued together: this runs before every call.
    const [manifestBytes, executable] = await inOrder(
      // A refused plugin.json (FIFO, symlink, foreign owner) is a package fault like the executable's.
      readManifestBytes(record.manifestPath).catch((error: unknown) =>
        error instanceof PackageFileError ? { refused: error.message } : Promise.reject(error),
      ),
      checkExecutable(record.packageDir, record.executable),
    );
    if (manifestBytes !== undefined && 'refused' in manifestBytes) {
      await this.#markUnavailable(record, manifestBytes.refused);
      throw new PackageInvalidError(`plugin ${record.id}: ${manifestBytes.refused}; the call was refused`);
    }
    if (manifestBytes === undefined || manifestBytes.length > MAX_MANIFEST_BYTES) {
      throw new PackageInvalidError(
        `plugin ${record.id}: ${record.manifestPath} is ${manifestBytes === undefined ? 'missing' : 'larger than 64 KiB'}`,
      );
    }
    if (!executable.ok) {
      await this.#markUnavailable(record, executable.error);
      throw new PackageInvalidError(`plugin ${record.id}: ${executable.error}; the call was refused`);
    }
    const fingerprint = await hashExecutable(manifestBytes, executable.path, onStats ? { onStats } : {});
    if (typeof fingerprint !== 'string') {
      await this.#markUnavailable(record, fingerprint.error);
      throw new PackageInvalidError(`plugin ${record.id}: ${fingerprint.error}; the call was refused`);
    }
    return fingerprint;
  }

  /**
   * Disables the plugin everywhere, its grants revoked; the audit names this
   * host and, for a change of other package files (`tree`), those files.
   */
  async #markChanged(
    record: PluginRecord,
    current: string,
    tree?: { tree: string; files: string[] },
  ): Promise<void> {
    await this.store.mutate(record.id, (latest) => {
      // Each host that sees other bytes is added: 'changed' lasts until every one has seen the trusted ones.
      const hosts = changedHostsOf(latest);
      if (!latest || latest.trustedFingerprint !== record.trustedFingerprint || hosts.includes(hostname())) {
        return { value: undefined };
      }
      const seenBy = this.options.processActor;
      return {
        next: {
          ...latest,
          trust: 'changed',
          changedOn: [...hosts, hostname()],
          enabled: false,
          grantedScopes: [],
          fingerprint: current,
          ...(tree ? { changedFiles: tree.files } : {}),
        },
        audit: [
          tree
            ? {
                actor: seenBy,
                action: 'plugin.package-changed',
                target: record.id,
                detail: {
                  seenBy,
                  host: hostname(),
                  files: tree.files,
                  trustedTree: record.trustedTreeDigest,
                  currentTree: tree.tree,
                },
              }
            : {
                actor: seenBy,
                action: 'plugin.fingerprint-changed',
                target: record.id,
                detail: { seenBy, host: hostname(), trusted: record.trustedFingerprint, current },
              },
        ],
        value: undefined,
      };
    });
  }

  async #markUnavailable(record: PluginRecord, error: string): Promise<void> {
    await this.store.mutate(record.id, (latest) => {
      if (!latest || (!latest.available && latest.error === error)) return { value: undefined };
      return {
        next: { ...latest, available: false, error },
        audit: [
          {
            actor: this.options.processActor,
            action: 'plugin.package-invalid',
            target: record.id,
            detail: { seenBy: this.options.processActor, host: hostname(), error },
          },
        ],
        value: undefined,
      };
    });
  }

  /**
   * A fault records unhealthy; the plugin's own error (-32000) is logged with
   * health left as it was. Its stderr was stored while it ran; the host's line
   * saying how it ended follows it (in the operation's log too).
   */
  async #recordFailure(id: string, error: unknown, operationId?: string): Promise<void> {
    const unhealthy = recordsUnhealthy(error);
    const message = boundedMessage(error instanceof Error ? error.message : String(error));
    const line: LogEntry = { at: new Date().toISOString(), source: 'host', line: `call failed: ${message}` };
    if (operationId) {
      await this.store.appendCallLogs(id, [line], { operationId, operation: [line] }).catch(() => {});
      if (unhealthy) await this.store.recordOutcome(id, { health: 'unhealthy', lastError: message }, []);
      return;
    }
    if (!unhealthy && !(error instanceof PluginCallError)) return;
    await this.store.recordOutcome(id, unhealthy ? { health: 'unhealthy', lastError: message } : undefined, [
      line,
    ]);
  }
}

/**
 * The kernel policy of one call: the plugin's (confinement-settings.ts), and
 * its project's root when the call was given it (project.files.read) —
 * writable only in a project.operate call.
 */
function callPolicyOf<M extends CallMethod>(
  record: PluginRecord,
  method: M,
  params: MethodParams<M>,
): CallPolicy {
  const policy = confinementPolicyOf(record.confinement, record.trustedFingerprint !== undefined);
  const root = (params as { project?: { root?: unknown } }).project?.root;
  return {
    network: policy.network,
    allowRead: policy.allowRead,
    allowWrite: policy.allowWrite,
    limits: policy.limits,
    ...(typeof root === 'string' ? { project: { root, write: method === 'project.operate' } } : {}),
  };
}

function stderrEntries(stderr: string[]): LogEntry[] {
  const at = new Date().toISOString();
  return stderr.map((line) => ({ at, source: 'stderr', line }));
}
