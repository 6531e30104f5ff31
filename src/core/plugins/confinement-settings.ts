// Kernel confinement of a plugin's calls as host policy (PROTOCOL §9.5, CLI.md
// `plugin set`): per plugin, stored with its record. Network is off for a
// package trusted from now on; a record trusted before network confinement
// existed has no `network` and keeps what it had (allow), said in the audit.
// Resource limits default to DEFAULT_RESOURCE_LIMITS; `allowRead` adds
// read-only paths to what a call may see (an interpreter outside the system
// directories, a shared data file).
import { isAbsolute, normalize } from 'node:path';
import { InvalidInputError } from '../platform/index.js';
import type { ResourceLimits } from '../supervision/index.js';

export type NetworkPolicy = 'allow' | 'none';

export type { ResourceLimits };

/** Who decided a plugin's network: an admin, the default at trust, or kept from before network confinement. */
export type NetworkSetBy = 'admin' | 'trust-default' | 'kept-from-before';

/** What an admin set for one plugin (unset: the default). */
export interface ConfinementSettings extends Partial<ResourceLimits> {
  network?: NetworkPolicy;
  /** Stored with `network`; never taken from an admin's input. */
  networkSetBy?: NetworkSetBy;
  allowRead?: string[];
  /** Directories the plugin may write besides its TMPDIR (a cache of its own); an admin's choice, shown on review. */
  allowWrite?: string[];
}

/** The policy in force for one plugin's calls. */
export interface ConfinementPolicy {
  network: NetworkPolicy;
  /** Why the network is what it is (`set by an admin`, `the default for packages trusted from now on`, …). */
  networkReason: string;
  allowRead: string[];
  allowWrite: string[];
  limits: ResourceLimits;
}

const GIB = 1024 ** 3;

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  memoryBytes: 2 * GIB,
  cpuMs: 30 * 60_000,
  fileSizeBytes: GIB,
  openFiles: 1024,
  processes: 256,
  diskBytes: 256 * 1024 ** 2,
};

/** Bounds an admin's value must keep (a call with less than this cannot start a runtime). */
export const LIMIT_BOUNDS: Record<keyof ResourceLimits, { min: number; max: number; name: string }> = {
  memoryBytes: { min: 64 * 1024 ** 2, max: 1024 * GIB, name: 'memory' },
  cpuMs: { min: 1_000, max: 7 * 24 * 3_600_000, name: 'cpu' },
  fileSizeBytes: { min: 1024 ** 2, max: 1024 * GIB, name: 'file size' },
  openFiles: { min: 16, max: 1_048_576, name: 'open files' },
  processes: { min: 1, max: 65_536, name: 'processes' },
  diskBytes: { min: 1024 ** 2, max: 1024 * GIB, name: 'disk' },
};

export const MAX_ALLOW_READ = 32;

/**
 * The policy of a plugin's calls; `everTrusted` false (no review yet), the
 * policy trusting will apply, so the reviewer sees it before deciding.
 */
export function confinementPolicyOf(
  settings: ConfinementSettings | undefined,
  everTrusted: boolean,
): ConfinementPolicy {
  const limits = { ...DEFAULT_RESOURCE_LIMITS };
  for (const name of Object.keys(limits) as (keyof ResourceLimits)[]) {
    const value = settings?.[name];
    if (value !== undefined) limits[name] = value;
  }
  return {
    network: settings?.network ?? (everTrusted ? 'allow' : 'none'),
    networkReason: networkReason(settings, everTrusted),
    allowRead: settings?.allowRead ?? [],
    allowWrite: settings?.allowWrite ?? [],
    limits,
  };
}

function networkReason(settings: ConfinementSettings | undefined, everTrusted: boolean): string {
  // Never trusted: trust() sets `none` (plugin-service.ts) unless an admin set it already.
  if (settings?.network === undefined && !everTrusted)
    return 'what trusting it applies: no network (an admin allows it with `plugin set --network allow`)';
  if (settings?.network === undefined || settings.networkSetBy === 'kept-from-before')
    return 'trusted before network confinement: it keeps the network it had (`plugin set --network none` confines it)';
  if (settings.networkSetBy === 'trust-default')
    return 'the default for a package trusted now (an admin allows it with `plugin set --network allow`)';
  return 'set by an admin';
}

/** Checks an admin's new settings; paths absolute, normalized, without NUL or newline. */
export function checkConfinementSettings(settings: ConfinementSettings): ConfinementSettings {
  for (const name of Object.keys(LIMIT_BOUNDS) as (keyof ResourceLimits)[]) {
    const value = settings[name];
    if (value === undefined) continue;
    const { min, max, name: label } = LIMIT_BOUNDS[name];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new InvalidInputError(`the ${label} limit must be a whole number from ${min} to ${max}`);
    }
  }
  if (settings.network !== undefined && settings.network !== 'allow' && settings.network !== 'none') {
    throw new InvalidInputError(`network must be allow or none, not ${String(settings.network)}`);
  }
  for (const [field, option] of [
    ['allowRead', '--allow-read'],
    ['allowWrite', '--allow-write'],
  ] as const) {
    const paths = settings[field];
    if (!paths) continue;
    if (paths.length > MAX_ALLOW_READ)
      throw new InvalidInputError(`at most ${MAX_ALLOW_READ} ${option} paths`);
    settings[field] = paths.map((path) => {
      if (!isAbsolute(path) || /[\0\n]/.test(path))
        throw new InvalidInputError(`${option} needs an absolute path, not ${JSON.stringify(path)}`);
      return normalize(path);
    });
  }
  return settings;
}
