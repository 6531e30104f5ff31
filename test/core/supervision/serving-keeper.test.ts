// A slot of the spawn helper keeps its keeper from call to call (native/keeper.h
// keeper_serve): no keeper is forked per call. Shown with the helper itself and
// real processes: the same keeper serves sequential calls; a call the host had
// to kill retires it; a keeper killed while idle is replaced; nothing a call
// started outlives it into the next one.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { containment } from '../../../src/core/supervision/containment.js';
import { HELPER_PATH, Spawner } from '../../../src/core/supervision/spawner.js';

const built = containment().mechanism === 'subreaper';

type Call = Awaited<ReturnType<Spawner['spawn']>> & { keeper: number; servingKeeper: boolean };

async function run(spawner: Spawner, script: string): Promise<Call & { out: () => string }> {
  const call = (await spawner.spawn({ file: '/bin/sh', args: ['-c', script], cwd: '/', env: {} })) as Call;
  // Read from the start, as the supervisor does: what arrives with the start is not missed.
  let out = '';
  call.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await call.started;
  return Object.assign(call, { out: () => out });
}

async function finish(call: Call): Promise<void> {
  await call.exited;
  await call.end();
}

function running(pid: number): Promise<boolean> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then(
    (stat) => !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)),
    () => false,
  );
}

describe.skipIf(!built)('a keeper serves its slot call after call', () => {
  it('sequential calls run under the same keeper, which lives on between them', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const first = await run(spawner, 'exit 0');
    await finish(first);
    const second = await run(spawner, 'exit 0');
    await finish(second);
    expect(first.servingKeeper).toBe(true);
    expect(second.keeper).toBe(first.keeper);
    expect(await running(first.keeper)).toBe(true);
  });

  it("what a call left behind (a setsid child) is gone before the slot's next call starts", async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const first = await run(spawner, 'setsid sleep 60 & echo $! ; exit 0');
    await finish(first);
    const left = Number(first.out().trim());
    expect(left).toBeGreaterThan(0);
    expect(await running(left)).toBe(false);
    const second = await run(spawner, 'exit 0');
    await finish(second);
    expect(second.keeper).toBe(first.keeper);
  });

  it('a call the host had to kill retires its keeper: the next call gets a new one', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const hung = await run(spawner, 'sleep 60');
    await hung.end(); // KILL: the host ends a call that did not end by itself
    await expect.poll(() => running(hung.keeper)).toBe(false);
    const next = await run(spawner, 'exit 0');
    await finish(next);
    expect(next.keeper).not.toBe(hung.keeper);
  });

  it('a keeper killed while idle is replaced; the next call runs', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const first = await run(spawner, 'exit 0');
    await finish(first);
    process.kill(first.keeper, 'SIGKILL');
    await expect.poll(() => running(first.keeper)).toBe(false);
    const next = await run(spawner, 'echo ran');
    await finish(next);
    expect(next.out()).toBe('ran\n');
    expect(next.keeper).not.toBe(first.keeper);
  });
});
