// Redis high availability through Sentinel (docs/ARCHITECTURE.md "Beyond one
// machine"): api-side code and two real worker processes reach Redis through
// `--redis-url redis+sentinel://…`; the primary is killed with -9 mid-batch.
// Every worker takes jobs again after the failover, the batch completes with
// one result per project, and every operation acknowledged after a replica
// confirmed it (WAIT, src/core/redis/replica-ack.ts) survives on the new primary.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/core/work/operations/operation-store.js';
import { ReplicaAcknowledger } from '../../src/core/redis/replica-ack.js';
import { requireBuiltCli } from '../support/cli-process.js';
import { runTable } from '../support/run-table.js';
import {
  ACTOR,
  PLUGIN_ID,
  createInstallation,
  killAllSpawned,
  readLines,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
  type Spawned,
} from '../support/workers.js';
import { startSentinelTopology, type SentinelTopology } from './sentinels.js';

const PROJECTS = 400;
const OPERATIONS = 20;

let topology: SentinelTopology | undefined;
let installation: Installation | undefined;

beforeAll(async () => {
  requireBuiltCli();
  topology = await startSentinelTopology();
});

afterAll(async () => {
  await killAllSpawned();
  await installation?.close();
  await topology?.stop();
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

describe('Sentinel: the primary killed with -9 mid-batch', () => {
  it('workers resume after the failover, the batch completes, no acknowledged operation is lost', async () => {
    const suiteStarted = performance.now();
    const sentinel = topology!;
    installation = await createInstallation(sentinel.url, 'sentinel');
    const { runtime, packageDir, projectsDir } = installation;
    const ids = Array.from({ length: PROJECTS }, (_, index) => `s${String(index).padStart(3, '0')}`);
    await Promise.all(ids.map((id) => mkdir(join(projectsDir, id))));
    await runtime.projects.scan(projectsDir, { trust: true }, ACTOR);
    const opProjects = Array.from({ length: OPERATIONS }, (_, index) => `op-${index}`);
    const roots = await Promise.all(opProjects.map((project) => installation!.addProject(project)));
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '25\n');
    const workers: Spawned[] = await Promise.all([
      startWorker(installation, { lockDurationMs: 3_000 }),
      startWorker(installation, { lockDurationMs: 3_000 }),
    ]);

    // What WAIT costs: createOperation now waits for a replica before it answers
    // (src/core/work/operations/operation-service.ts); beside it, one write alone vs the WAIT that follows it.
    const acknowledger = new ReplicaAcknowledger({ timeoutMs: 2_000 });
    const plainMs: number[] = [];
    const waitedMs: number[] = [];
    const waitOnlyMs: number[] = [];
    const latencyProjects = await Promise.all(
      Array.from({ length: 30 }, (_, index) => installation!.addProject(`lat-${index}`)),
    );
    for (let index = 0; index < latencyProjects.length; index += 1) {
      const started = performance.now();
      await runtime.operations.create(
        { pluginId: PLUGIN_ID, projectId: `lat-${index}`, action: 'append', input: { append: 'lat' } },
        ACTOR,
      );
      waitedMs.push(performance.now() - started);
      const writeStarted = performance.now();
      await runtime.redis.set(`wait-cost:${index}`, 'x');
      plainMs.push(performance.now() - writeStarted);
      const ack = await acknowledger.confirm(runtime.redis);
      expect(ack.replicas).toBe(1);
      waitOnlyMs.push(ack.waitedMs);
    }

    const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
    const recorded = async () => {
      const view = await runtime.batches.store.get(batch.batchId, { results: false });
      return view!.succeeded + view!.failed;
    };
    await waitFor('80 recorded results', async () => (await recorded()) >= 80, 60_000, 20);

    // Operations acknowledged the way the API must: record + job + audit, then a replica's WAIT.
    const acknowledged: string[] = [];
    for (const project of opProjects) {
      const { operation } = await runtime.operations.create(
        { pluginId: PLUGIN_ID, projectId: project, action: 'append', input: { append: 'once' } },
        ACTOR,
      );
      await acknowledger.confirm(runtime.redis);
      acknowledged.push(operation.id);
    }
    const atKill = await recorded();
    const killedAt = Date.now();
    await sentinel.killPrimary();
    await waitFor(
      'the sentinels to promote the replica',
      async () => (await sentinel.currentPrimaryPort().catch(() => 0)) === sentinel.replicaPort,
      30_000,
      100,
    );
    const promotedAt = Date.now();

    // Every worker takes jobs again: a plugin call it spawned after the promotion.
    const callsAfter = async (worker: Spawned) =>
      (await readLines(join(packageDir, 'calls.log'))).filter((line) => {
        const [method, , , ppid, at] = line.split(' ');
        return method === 'project.inspect' && Number(ppid) === worker.pid && Number(at) > promotedAt;
      }).length;
    for (const worker of workers)
      await waitFor(
        `worker ${worker.pid} to take jobs after the failover`,
        () => callsAfter(worker),
        60_000,
        200,
      );

    const finished = await untilBatchFinished(runtime, batch.batchId, {
      what: 'the batch to finish after the failover',
      timeoutMs: 180_000,
      intervalMs: 200,
    });
    const survived = await Promise.all(acknowledged.map((id) => runtime.operations.store.get(id)));
    const operations = await Promise.all(
      acknowledged.map((id) =>
        runtime.operations.wait(id, { signal: AbortSignal.timeout(60_000), pollMs: 200 }),
      ),
    );
    const entries = await Promise.all(roots.map((root) => readLines(join(root, 'operations.log'))));
    const resultIds = finished.results!.map((result) => result.projectId);
    const inspections = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.inspect '),
    );
    const served = workers.map((worker) => ({
      host: `worker pid ${worker.pid}`,
      jobsServed: inspections.filter((line) => Number(line.split(' ')[3]) === worker.pid).length,
    }));
    const lostOperations = survived.filter((operation) => !operation).length;
    const duplicates = entries.filter((lines) => lines.length > 1).length;
    console.log(
      runTable(
        `Sentinel failover (primary kill -9 at ${atKill}/${PROJECTS} recorded)`,
        served,
        {
          partitions: 0,
          failovers: 1,
          projectsLost: PROJECTS - new Set(resultIds).size,
          operationsLost: lostOperations,
          duplicateMutations: duplicates,
        },
        [
          `failover: replica promoted ${promotedAt - killedAt} ms after the kill; both workers took jobs again`,
          `one write: median ${percentile(plainMs, 50).toFixed(2)} ms, p95 ${percentile(plainMs, 95).toFixed(2)} ms; ` +
            `operation acknowledged (record + job + audit + WAIT 1): median ${percentile(waitedMs, 50).toFixed(1)} ms, p95 ${percentile(waitedMs, 95).toFixed(1)} ms; ` +
            `WAIT after one write: median ${percentile(waitOnlyMs, 50).toFixed(2)} ms, p95 ${percentile(waitOnlyMs, 95).toFixed(2)} ms`,
          `operations: ${operations.map((operation) => operation.state).join(',')}`,
          `suite wall time ${((performance.now() - suiteStarted) / 1000).toFixed(1)} s`,
        ],
      ),
    );

    expect(lostOperations).toBe(0);
    expect(operations.every((operation) => isTerminal(operation.state))).toBe(true);
    for (const lines of entries) expect(lines.length).toBeLessThanOrEqual(1);
    expect(finished.total).toBe(PROJECTS);
    expect(finished.failed).toBe(0);
    expect(resultIds).toHaveLength(PROJECTS);
    expect([...resultIds].sort()).toEqual(ids);
  });
});
