// PROTOCOL.md §4: lowercase hex SHA-256 of the manifest bytes immediately
// followed by the executable bytes. The executable is streamed, never loaded
// whole (it may be 128 MiB).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export async function fingerprintOf(manifestBytes: Uint8Array, executablePath: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update(manifestBytes);
  for await (const chunk of createReadStream(executablePath, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
