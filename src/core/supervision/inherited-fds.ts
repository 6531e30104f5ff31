// Descriptors this process inherited without close-on-exec (a pipe the shell
// that started `up` left open, fd 251 in the wild): every child would inherit
// them too. Node cannot set FD_CLOEXEC or close_range for a child, so the
// process-group fallback maps each such descriptor of the child onto /dev/null
// (the native helper closes them itself).
import { openSync, readFileSync, readdirSync } from 'node:fs';

/** O_CLOEXEC in /proc/<pid>/fdinfo's octal `flags:` (Linux). */
const O_CLOEXEC = 0o2000000;

let devNull: number | undefined;

/** This process's descriptors above stderr that a child would inherit; none off Linux. */
export function inheritableDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (flags && (Number.parseInt(flags[1]!, 8) & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // closed meanwhile (the readdir's own descriptor among them)
    }
  }
  return found.sort((a, b) => a - b);
}

/**
 * The `stdio` array for a child with pipes on 0–2 and, in place of every
 * inheritable descriptor, /dev/null (opened here once, close-on-exec itself).
 */
export function stdioWithoutStrays(): ['pipe', 'pipe', 'pipe', ...(number | 'ignore')[]] {
  const strays = inheritableDescriptors();
  const stdio: ['pipe', 'pipe', 'pipe', ...(number | 'ignore')[]] = ['pipe', 'pipe', 'pipe'];
  if (strays.length === 0) return stdio;
  devNull ??= openSync('/dev/null', 'r');
  for (let fd = 3; fd <= strays.at(-1)!; fd += 1) stdio.push(strays.includes(fd) ? devNull : 'ignore');
  return stdio;
}
