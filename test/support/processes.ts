// Process checks for the fault matrix: which recorded pids and process groups
// still hold a live process. A zombie (exited, not yet reaped by its parent or
// by init) is dead: it runs no code and holds no resource but its pid.
import { readFile, readdir } from 'node:fs/promises';

export interface PidFile {
  role: 'plugin' | 'grandchild';
  pid: number;
  file: string;
}

const PID_FILE = /^(plugin|grandchild)-(\d+)\.pid$/;

/** The pid files a fault plugin wrote into its package directory. */
export async function pidFiles(dir: string): Promise<PidFile[]> {
  const names = await readdir(dir);
  const found: PidFile[] = [];
  for (const name of names.sort()) {
    const match = PID_FILE.exec(name);
    if (match) found.push({ role: match[1] as PidFile['role'], pid: Number(match[2]), file: name });
  }
  return found;
}

interface ProcStat {
  state: string;
  pgrp: number;
}

/** /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses. */
async function procStat(pid: number): Promise<ProcStat | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '?', pgrp: Number(fields[2]) };
}

/** True when the pid names a process that is not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  // A pid read before it was written (NaN, 0) would otherwise count as alive forever.
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`isAlive: not a pid: ${pid}`);
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists (not ours); count it as alive.
    return true;
  }
  const stat = await procStat(pid);
  // Gone between the two looks, or a zombie: dead.
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * Live (non-zombie) members of the process group `pgid`. `process.kill(-pgid, 0)`
 * answers first; only when it says the group exists are its members looked up
 * in /proc, since a group of zombies still answers the signal probe.
 */
export async function liveGroupMembers(pgid: number): Promise<number[]> {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return [];
  }
  const members: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await procStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push(Number(entry));
  }
  return members;
}

/**
 * Every live process among `pids` and the process groups `groups`. SIGKILL
 * is delivered asynchronously, so a process killed the moment the call
 * returned may need a few milliseconds to die: poll up to `withinMs`, no
 * longer — a process that outlives a call (a `sleep 600` grandchild) is still
 * there after it.
 */
export async function survivors(
  pids: readonly number[],
  groups: readonly number[],
  withinMs = 250,
): Promise<number[]> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const alive = new Set<number>();
    for (const pid of pids) if (await isAlive(pid)) alive.add(pid);
    for (const pgid of groups) for (const pid of await liveGroupMembers(pgid)) alive.add(pid);
    if (alive.size === 0 || performance.now() >= deadline) return [...alive].sort((a, b) => a - b);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Best effort: SIGKILL whatever a failed test left behind, so it cannot leak into the next. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
