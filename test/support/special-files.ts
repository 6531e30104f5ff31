// FIFOs, sockets and devices where a package file should be, and files owned
// by another user: what a hostile package or co-user can put on disk.
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { chown, open } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

/** A uid that is neither root nor the test's own user. */
export const OTHER_UID = 12345;
export const RUNS_AS_ROOT = process.getuid?.() === 0;
export const NOT_ROOT_REASON = 'needs root: these tests chown files to another uid (skipped)';

export function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** A character device like /dev/null (needs root and CAP_MKNOD); false when it cannot be made. */
export function mknodNull(path: string): boolean {
  try {
    execFileSync('mknod', [path, 'c', '1', '3'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A listening unix socket at `path`; close the server to remove it. */
export async function unixSocket(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  return server;
}

/**
 * Unblocks anything stuck opening `path` for reading (code that blocks on a
 * FIFO leaves a thread of the pool waiting forever otherwise).
 */
export async function releaseFifo(path: string): Promise<void> {
  try {
    await (await open(path, constants.O_WRONLY | constants.O_NONBLOCK)).close();
  } catch {
    // no reader waiting (ENXIO), or already gone
  }
}

export async function chownToOther(path: string): Promise<void> {
  await chown(path, OTHER_UID, OTHER_UID);
}

/** `promise`, or a rejection naming `what` when it takes longer than `ms` (for code that could hang). */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
