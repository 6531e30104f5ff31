// docs/PROTOCOL.md §4: lowercase hex SHA-256 of the manifest bytes immediately
// followed by the executable bytes. The executable is streamed, never loaded
// whole (it may be 128 MiB), from a descriptor opened without blocking and
// checked to be a regular file first (a FIFO would never end).
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { SAFE_OPEN_FLAGS, PackageFileError } from './package-files.js';
import { fileKind } from './path-safety.js';

export async function fingerprintOf(manifestBytes: Uint8Array, executablePath: string): Promise<string> {
  const handle = await open(executablePath, SAFE_OPEN_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new PackageFileError(`${executablePath} is ${fileKind(stats)}, not a regular file`);
    }
    const hash = createHash('sha256');
    hash.update(manifestBytes);
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false })) {
      hash.update(chunk as Buffer);
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}
