// Processes by /proc: whether one still runs, and every descendant of one (what the host kills
// itself when the spawn helper does not do its job).
import { existsSync, readFileSync, readdirSync } from 'node:fs';

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: gone already
  }
}

/** /proc/<pid>/stat: neither gone nor a zombie. */
export function isRunning(pid: number): boolean {
  // existsSync first: no exception (the costly part) for the usual answer, gone.
  if (!existsSync(`/proc/${pid}`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat[stat.lastIndexOf(')') + 2];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Every descendant of `pid` by /proc/<pid>/task/<tid>/children, parents before children. */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}
