// Redis killed with SIGKILL and restarted (AOF, appendfsync always) while
// workers run a batch: the batch completes with one result per project, and
// every operation acknowledged before the kill is still there.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/core/work/operations/operation-store.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  readLines,
  sleep,
  startWorker,
  untilBatchFinished,
  waitFor,
} from '../support/workers.js';

const suite = useQueueSuite('2-redis-restart', { appendfsync: 'always' });
const { report } = suite;

describe('Redis killed with -9 and restarted during a batch', () => {
  it('the 100-project batch completes with one result each; acknowledged operations survive', async () => {
    const installation = await suite.install('redis-restart');
    const { runtime, packageDir, projectsDir } = installation;
    const ids = Array.from({ length: 100 }, (_, index) => `r${String(index).padStart(3, '0')}`);
    await Promise.all(ids.map((id) => mkdir(join(projectsDir, id))));
    await runtime.projects.scan(projectsDir, { trust: true }, ACTOR);
    const opProjects = ['op-a', 'op-b', 'op-c', 'op-d', 'op-e'];
    const roots = await Promise.all(opProjects.map((project) => installation.addProject(project)));
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '80\n');
    await Promise.all([startWorker(installation), startWorker(installation)]);

    const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
    const recorded = async () => {
      const view = await runtime.batches.store.get(batch.batchId, { results: false });
      return view!.succeeded + view!.failed;
    };
    await waitFor('25 recorded results', async () => (await recorded()) >= 25, 60_000, 20);
    // Acknowledged just before the kill: each call returned, so the API would have answered 201.
    const acknowledged: string[] = [];
    for (const project of opProjects) {
      const { operation } = await runtime.operations.create(
        { pluginId: PLUGIN_ID, projectId: project, action: 'append', input: { append: 'once' } },
        ACTOR,
      );
      acknowledged.push(operation.id);
    }
    const atKill = await recorded();
    await suite.redis.kill();
    await sleep(1_500);
    await suite.redis.restart();

    const survived = await Promise.all(acknowledged.map((id) => runtime.operations.store.get(id)));
    const finished = await untilBatchFinished(runtime, batch.batchId, {
      what: 'the batch to finish after the restart',
      timeoutMs: 90_000,
      intervalMs: 100,
    });
    const operations = await Promise.all(
      acknowledged.map((id) =>
        runtime.operations.wait(id, { signal: AbortSignal.timeout(30_000), pollMs: 100 }),
      ),
    );
    const entries = await Promise.all(roots.map((root) => readLines(join(root, 'operations.log'))));
    const resultIds = finished.results!.map((result) => result.projectId);

    report.add(
      'kill -9 the owned Redis (AOF, appendfsync always) during a 100-project batch on 2 workers, restart it 1.5 s later',
      'batch completes: 100 results, unique ids; the 5 operations acknowledged before the kill still exist',
      `killed at ${atKill}/100 recorded; after restart: total ${finished.total}, succeeded ${finished.succeeded}, ` +
        `failed ${finished.failed}, results ${resultIds.length}, unique ids ${new Set(resultIds).size}; ` +
        `operations found after restart ${survived.filter(Boolean).length}/5, final states ` +
        `${operations.map((operation) => operation.state).join(', ')}, file entries ${entries.map((lines) => lines.length).join(', ')}`,
    );

    expect(survived.every(Boolean)).toBe(true);
    expect(finished.total).toBe(100);
    expect(finished.succeeded + finished.failed).toBe(100);
    // A Redis outage is not a plugin outcome: no project may be recorded failed because of it.
    expect(finished.failed).toBe(0);
    expect(resultIds).toHaveLength(100);
    expect(new Set(resultIds).size).toBe(100);
    expect([...resultIds].sort()).toEqual(ids);
    expect(operations.every((operation) => isTerminal(operation.state))).toBe(true);
    for (const lines of entries) expect(lines.length).toBeLessThanOrEqual(1);
  });
});
