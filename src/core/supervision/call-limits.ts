// The resource limits a call went over, and the RESOURCE_LIMIT error that names them with their
// values (PROTOCOL §11).
import { ResourceLimitError } from '../platform/index.js';
import { scratchAtFileLimit, type CallPolicy } from './call-policy.js';
import type { CallMethod } from './call-options.js';
import type { RunningCall } from './call-start.js';

/** RESOURCE_LIMIT for the limits the call went over, once nothing of it runs; undefined when none. */
export function overLimit<M extends CallMethod>(run: RunningCall<M>): ResourceLimitError | undefined {
  const policy = run.call.confinement.policy;
  return limitError(limitsHit(run, policy), policy);
}

/** What the helper saw, and a scratch file stopped at the file-size limit (EFBIG, no signal). */
function limitsHit<M extends CallMethod>(run: RunningCall<M>, policy: CallPolicy | undefined): string[] {
  const { child, scratch } = run;
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
