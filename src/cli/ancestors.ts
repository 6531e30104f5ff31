// The processes that started this one — its parent, that one's parent, … up to
// its session's leader — watched so that a foreground command stops when they
// are gone. `npm start` stopped by pid signals only the `sh -c` it runs the
// script in; without this, the command under that shell would run on with
// parent 1, serving its port. Linux reads /proc (each ancestor's start time, so
// a reused pid is not taken for it); elsewhere only the parent is watched.
import { readFileSync } from 'node:fs';

interface ProcessStat {
  state: string;
  ppid: number;
  session: number;
  startTime: string;
}

function statOf(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // After "pid (comm) ": state ppid pgrp session … with the start time the 22nd field overall.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0]!,
    ppid: Number(fields[1]),
    session: Number(fields[3]),
    startTime: fields[19]!,
  };
}

/** The ancestors of `pid`, nearest first, up to its session leader (pid 1 never). */
export function ancestorsOf(pid: number = process.pid): { pid: number; startTime: string }[] {
  const self = statOf(pid);
  if (!self) return [];
  const chain: { pid: number; startTime: string }[] = [];
  for (let current = self.ppid; current > 1 && chain.length < 64;) {
    const stat = statOf(current);
    if (!stat) break;
    chain.push({ pid: current, startTime: stat.startTime });
    if (current === self.session) break;
    current = stat.ppid;
  }
  return chain;
}

/**
 * Calls `onGone` once, with its pid, when an ancestor has exited (a zombie counts: it is gone,
 * only not yet reaped). Returns the function that stops watching.
 */
export function watchAncestors(onGone: (pid: number) => void, intervalMs = 500): () => void {
  const ancestors = ancestorsOf();
  const parent = process.ppid;
  const timer = setInterval(() => {
    const gone =
      ancestors.length === 0
        ? process.ppid !== parent
          ? parent
          : undefined
        : ancestors.find((ancestor) => {
            const stat = statOf(ancestor.pid);
            return stat === undefined || stat.startTime !== ancestor.startTime || stat.state === 'Z';
          })?.pid;
    if (gone === undefined) return;
    clearInterval(timer);
    onGone(gone);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
