// A plugin that floods stderr costs the host a read and a copy in the spawn
// helper, not a trip of every byte through the worker's streams: beyond
// 1.25 MiB/s the helper drops what the plugin writes, says how much, and hands
// on the stream's last whole lines at its end. Live logs stay live below that.
import { describe, expect, it } from 'vitest';
import { containment } from '../../../src/core/supervision/containment.js';
import { HELPER_PATH, Spawner } from '../../../src/core/supervision/spawner.js';

const built = containment().mechanism === 'subreaper';
const MiB = 1 << 20;

async function stderrOf(script: string): Promise<Buffer> {
  const spawner = new Spawner(HELPER_PATH, () => {});
  const call = await spawner.spawn({ file: '/bin/sh', args: ['-c', script], cwd: '/', env: {} });
  const chunks: Buffer[] = [];
  call.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  call.stdout.on('data', () => {});
  await call.started;
  await call.exited;
  await call.end();
  await new Promise((resolve) =>
    call.stderr.readableEnded ? resolve(undefined) : call.stderr.once('end', () => resolve(undefined)),
  );
  return Buffer.concat(chunks);
}

describe.skipIf(!built)('stderr floods in the spawn helper', () => {
  it('100 MiB written at once: a few MiB reach the host, with how much was dropped and the last whole lines', async () => {
    // 100 MiB of 1 KiB lines, then a last line the reader must get.
    const script = `head -c ${100 * MiB} /dev/zero | tr '\\0' 'x' | fold -w 1023; echo the last line`;
    const received = await stderrOf(`(${script}) 1>&2`);
    expect(received.length).toBeLessThan(8 * MiB);
    const text = received.toString('utf8');
    const notes = [
      ...text.matchAll(
        /\[switchyard: (\d+) bytes of stderr dropped: the plugin wrote more than 1\.25 MiB\/s\]/g,
      ),
    ];
    expect(notes.length, text.slice(0, 300)).toBeGreaterThan(0);
    // What was relayed and what was said dropped add up to what was written.
    const droppedBytes = notes.reduce((sum, note) => sum + Number(note[1]), 0);
    const written = 100 * MiB + Math.floor((100 * MiB) / 1023) + 'the last line\n'.length;
    const relayed = received.length - notes.reduce((sum, note) => sum + note[0].length + 2, 0);
    expect(droppedBytes + relayed).toBe(written);
    expect(text.endsWith('the last line\n')).toBe(true);
    // The tail starts on a line boundary: every kept line after the note is whole.
    const afterNote = text.slice(text.lastIndexOf(']\n') + 2);
    for (const line of afterNote.trimEnd().split('\n').slice(0, -1)) expect(line).toMatch(/^x{1023}$/);
  }, 60_000);

  it('a plugin that writes slowly loses nothing', async () => {
    const received = await stderrOf('i=0; while [ $i -lt 50 ]; do echo "line $i" 1>&2; i=$((i+1)); done');
    expect(received.toString('utf8')).toBe(Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join(''));
  });
});
