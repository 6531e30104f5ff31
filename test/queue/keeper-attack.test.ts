// A project lock is released only when no process of the call is alive
// (docs/PROTOCOL.md §9.5): a plugin that SIGSTOPs or kill -9s its keeper in a
// real worker still ends within its time limit, and a second operation on the
// same project starts only once every process of the first is dead. A kill -9
// of the worker while the keeper is stopped still takes the plugin with it; a
// plugin that stops the spawn helper is ended on time too, and cancel ends a
// plugin whose keeper is stopped.
// Run with SWITCHYARD_CONFINEMENT=off, so the signal reaches the keeper (under
// Landlock signal scoping the kernel refuses it: test/core/supervision/self-containment).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFINEMENT_ENV, containment } from '../../src/core/supervision/containment.js';
import { isAlive, killAll, survivors } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, kill9, readLines, startWorker, waitFor } from '../support/workers.js';

const subreaper = containment().mechanism === 'subreaper';
const CALL_TIMEOUT_MS = 3_000;
const GRACE_MS = 3_000;

/** Once the plugin reports its keeper stopped: the plugin's and its grandchild's pids. */
async function stoppedKeeperPids(root: string): Promise<[number, number]> {
  await waitFor('the attack', async () => {
    const [line] = await readLines(join(root, 'signal.result')).catch(() => []);
    return line === 'ok';
  });
  const [pid] = (await readLines(join(root, 'plugin.pid'))).map(Number);
  const [grandchild] = (await readLines(join(root, 'grandchild.pid'))).map(Number);
  return [pid!, grandchild!];
}

describe.skipIf(!subreaper)('a plugin that attacks its keeper, in a worker', () => {
  const suite = useQueueSuite('keeper-attack');
  beforeAll(() => void (process.env[CONFINEMENT_ENV] = 'off'));
  afterAll(() => void delete process.env[CONFINEMENT_ENV]);

  const attacks = [
    { target: 'its keeper', signal: 'SIGSTOP', signalHelper: false },
    { target: 'its keeper', signal: 'SIGKILL', signalHelper: false },
    { target: 'the spawn helper', signal: 'SIGSTOP', signalHelper: true },
  ] as const;
  for (const { target, signal, signalHelper } of attacks) {
    it(`${signal} of ${target}: the operation ends, the next one on the project never overlaps it`, async () => {
      const installation = await suite.install(
        `attack-${signal.toLowerCase()}${signalHelper ? '-helper' : ''}`,
      );
      await startWorker(installation, { concurrency: 2, callTimeoutMs: CALL_TIMEOUT_MS });
      const root = await installation.addProject('p1');
      const { operations } = installation.runtime;
      const startedAt = performance.now();
      const input = { writePid: true, spawnChild: true, signalKeeper: signal, signalHelper };
      const { operation: first } = await operations.create(
        {
          pluginId: PLUGIN_ID,
          projectId: 'p1',
          action: 'append',
          input: { ...input, sleepMs: 60_000, append: 'first' },
        },
        ACTOR,
      );
      // A plugin whose keeper dies is killed with it, maybe before it can write "ok": "sent" then says delivered.
      const result = await waitFor('the attack', async () => {
        const [line] = await readLines(join(root, 'signal.result')).catch(() => []);
        return line === 'sent' && signal === 'SIGSTOP' ? undefined : line;
      });
      expect(signal === 'SIGKILL' ? ['ok', 'sent'] : ['ok']).toContain(result);
      const [pid] = (await readLines(join(root, 'plugin.pid'))).map(Number);
      const [grandchild] = (await readLines(join(root, 'grandchild.pid'))).map(Number);
      const { operation: second } = await operations.create(
        { pluginId: PLUGIN_ID, projectId: 'p1', action: 'append', input: { append: 'second' } },
        ACTOR,
      );
      const ended = await operations.wait(first.id, { signal: AbortSignal.timeout(30_000), pollMs: 100 });
      const endedMs = performance.now() - startedAt;
      expect(ended.state).toBe('failed');
      expect(endedMs).toBeLessThan(CALL_TIMEOUT_MS + GRACE_MS + 2_000);
      // The second operation's plugin runs only after the first's processes died.
      await waitFor('the second operation', async () =>
        (await readLines(join(root, 'operations.log')).catch(() => [])).some((line) =>
          line.startsWith('second'),
        ),
      );
      const alive = [];
      for (const each of [pid!, grandchild!]) if (await isAlive(each)) alive.push(each);
      killAll(alive);
      expect(alive).toEqual([]);
      const done = await operations.wait(second.id, { signal: AbortSignal.timeout(30_000), pollMs: 100 });
      expect(done.state).toBe('succeeded');
    }, 60_000);
  }

  it('SIGSTOP of its keeper: op cancel still ends the operation at once, and nothing of it lives', async () => {
    const installation = await suite.install('attack-cancel');
    await startWorker(installation, { concurrency: 2, callTimeoutMs: 60_000 });
    const root = await installation.addProject('p1');
    const { operations } = installation.runtime;
    const input = {
      writePid: true,
      spawnChild: true,
      signalKeeper: 'SIGSTOP',
      sleepMs: 60_000,
      append: 'first',
    };
    const { operation } = await operations.create(
      { pluginId: PLUGIN_ID, projectId: 'p1', action: 'append', input },
      ACTOR,
    );
    const [pid, grandchild] = await stoppedKeeperPids(root);
    const cancelledAt = performance.now();
    await operations.cancel(operation.id, ACTOR);
    const ended = await operations.wait(operation.id, { signal: AbortSignal.timeout(30_000), pollMs: 100 });
    expect(ended.state).toBe('cancelled');
    expect(performance.now() - cancelledAt).toBeLessThan(GRACE_MS + 3_000);
    const alive = await survivors([pid, grandchild], [], 1_500);
    killAll(alive);
    expect(alive).toEqual([]);
  }, 60_000);

  it('kill -9 of the worker while the keeper is stopped takes the plugin and its grandchild', async () => {
    const installation = await suite.install('attack-worker-kill');
    const worker = await startWorker(installation, { concurrency: 2, callTimeoutMs: 60_000 });
    const root = await installation.addProject('p1');
    await installation.runtime.operations.create(
      {
        pluginId: PLUGIN_ID,
        projectId: 'p1',
        action: 'append',
        input: {
          writePid: true,
          spawnChild: true,
          signalKeeper: 'SIGSTOP',
          sleepMs: 60_000,
          append: 'first',
        },
      },
      ACTOR,
    );
    const [pid, grandchild] = await stoppedKeeperPids(root);
    await kill9(worker);
    const alive = await survivors([pid, grandchild], [], 1_500);
    killAll(alive);
    expect(alive).toEqual([]);
  }, 60_000);
});
