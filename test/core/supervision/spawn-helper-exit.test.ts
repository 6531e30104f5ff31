// The spawn helper's own failures are named (EXIT_* of native/protocol.json):
// before it exits it writes one line to stderr, and the host's error names the
// exit code, its meaning and that line. Provoked for real: a frame longer than
// the helper accepts (BAD_FRAME, 65).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { containment } from '../../../src/core/supervision/containment.js';
import { HELPER_PATH, Spawner, SpawnError } from '../../../src/core/supervision/spawner.js';

const built = containment().mechanism === 'subreaper';

/** A frame header claiming a payload of `length` bytes for call 1, STDIN. */
function header(length: number): Buffer {
  const frame = Buffer.alloc(9);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(1, 4);
  frame[8] = 2;
  return frame;
}

describe.skipIf(!built)('the spawn helper says why it exits', () => {
  it('a frame over 64 MiB: exit 65 with one line on stderr naming it', async () => {
    const helper = spawn(HELPER_PATH, [], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    helper.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    helper.stdin.write(header(65 << 20));
    const code = await new Promise((resolve) => helper.once('close', resolve));
    expect(code).toBe(65);
    expect(stderr).toBe('sy-spawner: a frame from the host is longer than 64 MiB (exit 65 BAD_FRAME)\n');
  });

  it("the host's error names the code, its meaning and the helper's line", async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const call = await spawner.spawn({ file: '/bin/sleep', args: ['30'], cwd: '/', env: {} });
    // Sent in the same write as the spawn request: the helper dies before it reports the start.
    call.stdin.write(Buffer.alloc((64 << 20) + 1));
    const error = await call.started.catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toBe(
      'the spawn helper exited with code 65 (BAD_FRAME: sy-spawner: a frame from the host is longer than 64 MiB (exit 65 BAD_FRAME))',
    );
    await call.end();
  });
});
