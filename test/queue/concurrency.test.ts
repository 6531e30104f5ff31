// One operation at a time per project across all workers, and idempotency
// keys: the same key returns the same operation, enqueued and run once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, readLines, sleep, startWorker } from '../support/workers.js';

const suite = useQueueSuite('4-concurrency');
const { report } = suite;

describe('one project, many workers', () => {
  it('two operations on one project submitted together to two workers never overlap', async () => {
    const installation = await suite.install('no-overlap');
    const { runtime } = installation;
    const root = await installation.addProject('shared');
    // Concurrency 1 each: each worker takes one of the two jobs, only the project lock can serialize them.
    await Promise.all([
      startWorker(installation, { concurrency: 1 }),
      startWorker(installation, { concurrency: 1 }),
    ]);
    const submitted = await Promise.all(
      ['first', 'second'].map((name) =>
        runtime.operations.create(
          {
            pluginId: PLUGIN_ID,
            projectId: 'shared',
            action: 'append',
            input: { append: name, recordTimes: true, sleepMs: 1_500 },
          },
          ACTOR,
        ),
      ),
    );
    const finals = await Promise.all(
      submitted.map(({ operation }) =>
        runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(30_000), pollMs: 50 }),
      ),
    );
    const records = await Promise.all(finals.map((final) => runtime.operations.store.get(final.id)));
    const intervals = (await readLines(join(root, 'operations.log'))).map((line) => {
      const match = /^(\S+) start=(\d+) end=(\d+)$/.exec(line)!;
      return { name: match[1]!, start: Number(match[2]), end: Number(match[3]) };
    });
    intervals.sort((a, b) => a.start - b.start);
    const [a, b] = intervals;
    const gapMs = a && b ? b.start - a.end : NaN;
    const workers = new Set(records.map((record) => record?.worker));
    report.add(
      'two operations on one project submitted together to two workers (concurrency 1 each), 1.5 s each',
      'both succeed; the plugin-recorded [start, end] intervals never overlap',
      `${finals.map((final) => final.state).join(', ')}; ran on ${workers.size} worker(s); intervals ` +
        `${intervals.map((interval) => `${interval.name} [${interval.start}, ${interval.end}]`).join(', ')}; ` +
        `second started ${gapMs} ms after the first ended`,
    );
    expect(finals.map((final) => final.state)).toEqual(['succeeded', 'succeeded']);
    expect(intervals).toHaveLength(2);
    expect(gapMs).toBeGreaterThanOrEqual(0);
  });

  it('the same idempotency key twice (concurrently, then again): one operation, one job, one run', async () => {
    const installation = await suite.install('idempotency');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('idem');
    const request = {
      pluginId: PLUGIN_ID,
      projectId: 'idem',
      action: 'append',
      input: { append: 'once' },
      idempotencyKey: `key-${installation.prefix}`,
    };
    const together = await Promise.all([
      runtime.operations.create(request, ACTOR),
      runtime.operations.create(request, ACTOR),
    ]);
    const again = await runtime.operations.create(request, ACTOR);
    const counts = await runtime.queues.operate.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0);
    await startWorker(installation);
    const id = together[0].operation.id;
    const final = await runtime.operations.wait(id, { signal: AbortSignal.timeout(20_000) });
    const afterFinish = await runtime.operations.create(request, ACTOR);
    await sleep(500);
    const lines = await readLines(join(root, 'operations.log'));
    const operateCalls = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.operate '),
    );
    const requests = (await readAudit(runtime.redis, runtime.keys, 200)).filter(
      (entry) => entry.action === 'operation.request',
    );
    const ids = new Set([...together, again, afterFinish].map((result) => result.operation.id));
    report.add(
      'the same idempotency key: twice concurrently, once more queued, once more after it finished',
      'one operation (same id), one job, the project file has one entry',
      `${ids.size} distinct id(s); created flags ${[...together, again, afterFinish].map((result) => result.created).join('/')}; ` +
        `${jobs} job(s) queued; ${requests.length} operation.request audit(s); final ${final.state}; ` +
        `file entries ${lines.length}; plugin operate calls ${operateCalls.length}`,
    );
    expect(ids.size).toBe(1);
    expect(together.map((result) => result.created).sort()).toEqual([false, true]);
    expect(again.created).toBe(false);
    expect(afterFinish).toMatchObject({ created: false, operation: { state: 'succeeded' } });
    expect(jobs).toBe(1);
    expect(requests).toHaveLength(1);
    expect(final.state).toBe('succeeded');
    expect(lines).toHaveLength(1);
    expect(operateCalls).toHaveLength(1);
  });
});
