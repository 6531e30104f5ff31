// Pure rules and views of the plugin registry: what a refresh makes of a
// discovered package, whether the stored state allows a call, which scopes
// may be granted, what a plugin call is told about a project, and the shapes
// the fronts print. No I/O here; plugin-service.ts and plugin-calls.ts apply them.
import type { WorkerConfinement } from './confinement-report.js';
import { SCOPES, type Capability, type Scope } from '@switchyard/plugin-sdk/protocol';
import type { AuditInput } from '../access/index.js';
import type { DiscoveredPackage } from './discovery.js';
import {
  CallCancelledError,
  FingerprintChangedError,
  InvalidInputError,
  PackageInvalidError,
  PermissionDeniedError,
  PluginCallError,
  PluginDisabledError,
  PluginUnavailableError,
  ProtocolMismatchError,
  SwitchyardError,
  TrustRequiredError,
} from '../platform/index.js';
import type { HealthRecord, HealthState, PluginRecord } from './plugin-store.js';
import type { Project } from '../projects/index.js';
import type { Containment } from '../supervision/index.js';
import { timeLimitsOf, type TimeLimits } from './time-limits.js';
import { confinementPolicyOf, type ConfinementPolicy } from './confinement-settings.js';
import { retentionOf } from './retention-policy.js';
import { rateText } from './plugin-caps.js';
import {
  MAX_PACKAGE_BYTES,
  MAX_PACKAGE_ENTRIES,
  changedPaths,
  treeDigest as treeDigestOf,
} from './package-tree.js';

/** docs/CLI.md's JSON shape of a plugin. */
export interface PluginView {
  id: string;
  name: string;
  version: string;
  protocolVersion: string;
  fingerprint: string | null;
  capabilities: Capability[];
  requestedScopes: Scope[];
  grantedScopes: Scope[];
  trust: PluginRecord['trust'];
  enabled: boolean;
  health: HealthState;
  available: boolean;
  error?: string;
}

/** Everything a reviewer needs (plugin show). */
export interface PluginDetail extends PluginView {
  trustedFingerprint?: string;
  trustedBy?: string;
  trustedAt?: string;
  lastError?: string;
  healthCheckedAt?: string;
  manifestPath: string;
  packageDir: string;
  executable: string;
  /** Digest of the whole package (every path, type, mode and content hash), and the one trusted. */
  treeDigest?: string;
  trustedTreeDigest?: string;
  /** Every file, directory and symlink of the package as the last discovery saw it. */
  files: { path: string; type: string; mode: string; size: number; target?: string }[];
  /** While changed: the files that differ from the reviewed package. */
  changedFiles?: string[];
  /** The bounds of a package (PROTOCOL §3). */
  packageLimits: { entries: number; bytes: number };
  /** The host's time limits for this plugin's calls (ms). */
  timeLimits: TimeLimits;
  /** What the kernel lets this plugin's calls do (`plugin set`): network, extra paths, resource limits. */
  policy: ConfinementPolicy;
  /** How long its finished batches are kept (`plugin set --retention-*`; `days` unset: the host's). */
  retention: { batches: number; days?: number };
  /** Installation-wide caps on its calls (`plugin set --max-concurrency/--rate`); null: none. */
  caps: { maxConcurrency: number | null; rate: string | null };
  /** How this plugin's call processes are contained, as the process that rendered this sees it. */
  /** As this process sees it (`seenBy`), and as each running worker reported it for its own host. */
  containment: Containment & { seenBy: string; workers: WorkerConfinement[] };
}

/** The registry record a refresh makes of a discovered package, and what it audits. */
export function reconcile(
  current: PluginRecord | undefined,
  found: DiscoveredPackage,
  actor: string,
  now: string,
  host: string,
): { next: PluginRecord; audit: AuditInput[] } {
  const manifest = found.manifest;
  const audit: AuditInput[] = [];
  const fingerprint = found.fingerprint ?? null;
  let trust = current?.trust ?? 'untrusted';
  let enabled = current?.enabled ?? false;
  let grantedScopes = current?.grantedScopes ?? [];
  const trusted = current?.trustedFingerprint;
  let changedOn = changedHostsOf(current);
  let changedFiles = current?.changedFiles;
  const trustedTree = current?.trustedTreeDigest;
  const trustedFiles = current?.trustedFiles;
  // Compared over the reviewed paths: a file added since trust is not part of what runs (package-tree.ts).
  const reviewed =
    found.tree && trustedFiles
      ? found.tree.entries.filter((e) => trustedFiles.some((t) => t.path === e.path))
      : undefined;
  const treeDigest = reviewed ? treeDigestOf(reviewed) : found.tree?.digest;
  // A package file other than plugin.json and the executable changed: handled as a fingerprint change.
  const treeChanged =
    trusted !== undefined &&
    fingerprint === trusted &&
    !!trustedTree &&
    !!treeDigest &&
    treeDigest !== trustedTree;
  if ((trusted && fingerprint && fingerprint !== trusted) || treeChanged) {
    const files = reviewed ? changedPaths(trustedFiles, reviewed) : [];
    const seenAgain =
      current?.trust === 'changed' &&
      current.fingerprint === fingerprint &&
      (!treeChanged || current.changedFiles?.join('\0') === files.join('\0'));
    if (!seenAgain) {
      audit.push({
        actor,
        action: treeChanged ? 'plugin.package-changed' : 'plugin.fingerprint-changed',
        target: found.id,
        detail: treeChanged
          ? { seenBy: actor, host, files, trustedTree, currentTree: treeDigest }
          : { seenBy: actor, host, trusted, current: fingerprint, files },
      });
      changedFiles = files;
    }
    trust = 'changed';
    changedOn = changedOn.includes(host) ? changedOn : [...changedOn, host];
    enabled = false;
    grantedScopes = [];
  } else if (
    trusted &&
    fingerprint === trusted &&
    (!trustedTree || treeDigest === trustedTree) &&
    trust === 'changed'
  ) {
    // This host holds the reviewed bytes (again). Trusted once every host that saw other bytes has
    // seen these since; grants stay revoked until enabled again. A new review clears it too.
    changedOn = changedOn.filter((other) => other !== host);
    if (changedOn.length === 0) {
      trust = 'trusted';
      changedFiles = undefined;
    }
  }
  let confinement = current?.confinement;
  if (trusted && confinement?.network === undefined) {
    // Trusted before network confinement existed: it keeps the network it had, and the audit says so.
    confinement = { ...confinement, network: 'allow', networkSetBy: 'kept-from-before' };
    audit.push({
      actor,
      action: 'plugin.network-kept',
      target: found.id,
      detail: {
        network: 'allow',
        reason: 'trusted before network confinement; `plugin set --network none` confines it',
      },
    });
  }
  if (!current) {
    audit.push({
      actor,
      action: 'plugin.discovered',
      target: found.id,
      detail: { fingerprint, packageDir: found.packageDir },
    });
  }
  const next: PluginRecord = {
    id: found.id,
    name: manifest?.name ?? found.hints?.name ?? current?.name ?? '',
    version: manifest?.version ?? found.hints?.version ?? current?.version ?? '',
    protocolVersion:
      manifest?.protocolVersion ?? found.hints?.protocolVersion ?? current?.protocolVersion ?? '',
    capabilities: manifest?.capabilities ?? current?.capabilities ?? [],
    requestedScopes: manifest?.requestedScopes ?? current?.requestedScopes ?? [],
    executable: manifest?.executable ?? current?.executable ?? '',
    arguments: manifest?.arguments ?? [],
    packageDir: found.packageDir,
    manifestPath: found.manifestPath,
    fingerprint,
    ...(found.tree ? { treeDigest: found.tree.digest, files: found.tree.entries } : {}),
    available: found.error === undefined,
    ...(found.error === undefined ? {} : { error: found.error }),
    protocolMismatch: found.protocolMismatch,
    trust,
    ...(trust === 'changed' && changedOn.length > 0 ? { changedOn } : {}),
    ...(trust === 'changed' && changedFiles ? { changedFiles } : {}),
    ...(trusted
      ? { trustedFingerprint: trusted, trustedBy: current?.trustedBy, trustedAt: current?.trustedAt }
      : {}),
    ...(trustedTree ? { trustedTreeDigest: trustedTree } : {}),
    ...(trustedFiles ? { trustedFiles } : {}),
    enabled,
    grantedScopes,
    discoveredAt: now,
    ...(current?.timeLimits ? { timeLimits: current.timeLimits } : {}),
    ...(current?.retention ? { retention: current.retention } : {}),
    ...(current?.caps ? { caps: current.caps } : {}),
    ...(confinement ? { confinement } : {}),
  };
  return { next, audit };
}

/** The hosts that saw other bytes than the trusted ones, as a list (an older record names one). */
export function changedHostsOf(record: Pick<PluginRecord, 'changedOn'> | undefined): string[] {
  const hosts = record?.changedOn;
  return hosts === undefined ? [] : typeof hosts === 'string' ? [hosts] : hosts;
}

/** PROTOCOL §9.1: the stored state must allow the call now. */
export function assertCallAllowed(record: PluginRecord, capability?: Capability, scope?: Scope): void {
  assertUsablePackage(record);
  assertTrusted(record);
  if (!record.enabled)
    throw new PluginDisabledError(`plugin ${record.id} is disabled; enable it with the scopes it needs`);
  if (capability && !record.capabilities.includes(capability)) {
    throw new PermissionDeniedError(`plugin ${record.id} does not declare the capability ${capability}`);
  }
  if (scope && !record.grantedScopes.includes(scope)) {
    throw new PermissionDeniedError(`plugin ${record.id} has not been granted the scope ${scope}`);
  }
}

/** Names the fix: review the package, then trust the fingerprint that review printed. */
export function untrustedPluginMessage(id: string): string {
  return `plugin ${id} is not trusted; review it with \`plugin show ${id}\`, then \`plugin trust ${id} --fingerprint <fingerprint> --yes\``;
}

/** Trusted, and not changed since. */
export function assertTrusted(record: PluginRecord): void {
  if (record.trust === 'untrusted') throw new TrustRequiredError(untrustedPluginMessage(record.id));
  if (record.trust === 'changed') throw changedError(record);
}

export function assertUsablePackage(record: PluginRecord): void {
  if (record.protocolMismatch)
    throw new ProtocolMismatchError(record.error ?? `plugin ${record.id} speaks another protocol`);
  if (!record.available)
    throw new PluginUnavailableError(
      `plugin ${record.id} is unavailable: ${record.error ?? 'unknown reason'}`,
    );
}

function changedError(record: PluginRecord): FingerprintChangedError {
  const files = record.changedFiles?.length ? `; changed: ${record.changedFiles.join(', ')}` : '';
  if (record.fingerprint === record.trustedFingerprint)
    return new FingerprintChangedError(
      `plugin ${record.id}: files of its package changed since it was trusted${files}${record.changedOn ? ` (on ${changedHostsOf(record).join(', ')})` : ''}; review it with \`plugin show ${record.id}\` and trust it again`,
      record.trustedFingerprint ?? '',
      record.fingerprint ?? undefined,
    );
  return new FingerprintChangedError(
    `plugin ${record.id} changed since it was trusted (trusted ${record.trustedFingerprint}, now ${record.fingerprint}${files}); review it and trust the new fingerprint`,
    record.trustedFingerprint ?? '',
    record.fingerprint ?? undefined,
  );
}

/** The scopes `enable` may grant: a non-empty subset of what the plugin requests. */
export function validateScopes(record: PluginRecord, scopes: string[]): Scope[] {
  if (scopes.length === 0) {
    throw new InvalidInputError(
      `enable needs at least one scope; ${record.id} requests: ${record.requestedScopes.join(', ')}`,
    );
  }
  const unique = [...new Set(scopes)];
  for (const scope of unique) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new InvalidInputError(`unknown scope ${JSON.stringify(scope)}; scopes are ${SCOPES.join(', ')}`);
    }
    if (!(record.requestedScopes as string[]).includes(scope)) {
      throw new InvalidInputError(
        `scope ${scope} was not requested by ${record.id} (it requests: ${record.requestedScopes.join(', ') || 'none'})`,
      );
    }
  }
  return unique as Scope[];
}

/** What a call is told about a project: `root` only with project.files.read. */
export function projectParams(project: Project, grants: readonly Scope[]) {
  return {
    id: project.id,
    displayName: project.displayName,
    ...(grants.includes('project.files.read') ? { root: project.root } : {}),
  };
}

/**
 * Faults of the plugin or its package record unhealthy; the caller's own
 * authorization errors, a cancelled call and the plugin's application error
 * (-32000, PROTOCOL §8: not a fault) leave health as it was.
 */
const RPC_APPLICATION_ERROR = -32000;

export function recordsUnhealthy(error: unknown): boolean {
  if (!(error instanceof SwitchyardError)) return false;
  if (error instanceof CallCancelledError) return false;
  // PROTOCOL §8: the plugin's own application error (-32000) is not a fault; any other code
  // (-32603: its handler crashed or returned an invalid status) is.
  if (error instanceof PluginCallError) return error.rpcCode !== RPC_APPLICATION_ERROR;
  return (
    error.callFailure || error instanceof PackageInvalidError || error instanceof FingerprintChangedError
  );
}

export function toView(record: PluginRecord, health: HealthRecord): PluginView {
  return {
    id: record.id,
    name: record.name,
    version: record.version,
    protocolVersion: record.protocolVersion,
    fingerprint: record.fingerprint,
    capabilities: record.capabilities,
    requestedScopes: record.requestedScopes,
    grantedScopes: record.grantedScopes,
    trust: record.trust,
    enabled: record.enabled,
    health: health.health,
    available: record.available,
    ...(record.error ? { error: record.error } : {}),
  };
}

export function toDetail(
  record: PluginRecord,
  health: HealthRecord,
  containment: PluginDetail['containment'],
): PluginDetail {
  return {
    ...toView(record, health),
    ...(record.trustedFingerprint ? { trustedFingerprint: record.trustedFingerprint } : {}),
    ...(record.trustedBy ? { trustedBy: record.trustedBy, trustedAt: record.trustedAt } : {}),
    ...(health.lastError ? { lastError: health.lastError } : {}),
    ...(health.checkedAt ? { healthCheckedAt: health.checkedAt } : {}),
    manifestPath: record.manifestPath,
    packageDir: record.packageDir,
    executable: record.executable,
    ...(record.treeDigest ? { treeDigest: record.treeDigest } : {}),
    ...(record.trustedTreeDigest ? { trustedTreeDigest: record.trustedTreeDigest } : {}),
    files: (record.files ?? []).map(({ path, type, mode, size, target }) => ({
      path,
      type,
      mode,
      size,
      ...(target !== undefined ? { target } : {}),
    })),
    ...(record.changedFiles?.length ? { changedFiles: record.changedFiles } : {}),
    packageLimits: { entries: MAX_PACKAGE_ENTRIES, bytes: MAX_PACKAGE_BYTES },
    timeLimits: timeLimitsOf(record.timeLimits),
    policy: confinementPolicyOf(record.confinement, record.trustedFingerprint !== undefined),
    retention: retentionOf(record.retention),
    caps: {
      maxConcurrency: record.caps?.maxConcurrency ?? null,
      rate: record.caps?.rate ? rateText(record.caps.rate) : null,
    },
    containment,
  };
}
