// Scale of work: enqueue N native-fixture inspections (one batch over N
// projects) and follow Redis memory (INFO memory used_memory):
//   before     — projects registered, nothing enqueued
//   enqueued   — createBatch returned (no worker running yet, so nothing consumed)
//   completed  — every job done, default retention (removeOnComplete: true;
//                results kept in Switchyard's own records for 7 days)
// Set-up note: the N project records are written straight into the projects
// hash with a pipeline, all pointing at one real directory (the service's
// add() audits each one, which is set-up, not what is measured).
// Targets: ≥ 20,000 jobs/s enqueued; ≤ 2 KiB of Redis memory per retained
// result beyond the result payload (payload = the stored result JSON bytes);
// the batch runs to completion (wall time, calls/s) and each worker's RSS
// (VmRSS, with its spawn helper's) is sampled every second: after the first
// 10,000 results it must stay flat (docs/adr/0008).
//
//   node bench/scale.mjs [jobs=100000] [enqueue-only]
// (enqueue-only: measure the enqueue and its memory, skip the completion run)
import {
  ACTOR,
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  connect,
  childrenNamed,
  loadAverage,
  machineNote,
  makeInstallation,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const jobs = Number(process.argv[2] ?? 100_000);
const enqueueOnly = process.argv[3] === 'enqueue-only';
const WORKERS = 2;
const CONCURRENCY = 4;
const KiB = 1024;

/**
 * VmRSS in KiB of a process, 0 when it is gone.
 * @param {number} pid
 */
async function rssKiB(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/**
 * Redis's used_memory in bytes.
 * @param {import('ioredis').Redis} client
 */
async function usedMemory(client) {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const client = connect(redis.url);
  await client.connect();
  const setupStart = performance.now();
  await addProjects(install, jobs);
  console.error(
    `set-up: ${jobs} project records written in ${((performance.now() - setupStart) / 1000).toFixed(1)} s`,
  );
  const { batches } = install.runtime;
  const core = install.runtime; // its redis and keys

  const memBefore = await usedMemory(client);
  const started = performance.now();
  const batch = await batches.create('native-fixture', 'all', ACTOR);
  const enqueueMs = performance.now() - started;
  const memEnqueued = await usedMemory(client);
  const waiting = await install.runtime.queues.inspect.getWaitingCount();
  console.error(`enqueued ${waiting} jobs in ${(enqueueMs / 1000).toFixed(2)} s`);
  if (enqueueOnly) {
    const rate = (jobs / enqueueMs) * 1000;
    console.log(
      `Scale (enqueue only): ${jobs} inspections; set-up wrote ${jobs} project records directly into the projects hash with a pipeline, all pointing at one real directory (${note})\n`,
    );
    console.log(
      table(
        ['measure', 'value'],
        [
          [
            'enqueue (createBatch over all projects)',
            `${(enqueueMs / 1000).toFixed(2)} s = ${rate.toFixed(0)} jobs/s`,
          ],
          ['used_memory before enqueue (projects registered)', `${(memBefore / (1 << 20)).toFixed(1)} MiB`],
          [
            'used_memory after enqueue',
            `${(memEnqueued / (1 << 20)).toFixed(1)} MiB (+${((memEnqueued - memBefore) / jobs).toFixed(0)} B per queued job)`,
          ],
        ],
      ),
    );
    console.log(
      `\nenqueue: ${rate.toFixed(0)} jobs/s (target ≥ 20,000) ${rate >= 20_000 ? 'MET' : 'NOT MET'}`,
    );
    client.disconnect();
    await cleanup();
    process.exit(0);
  }

  /** @type {import('./lib.mjs').BenchWorker[]} */
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1)
    workers.push(await startWorker(install, redis.url, CONCURRENCY));
  const runStart = performance.now();
  let lastPrint = 0;
  /** @type {import('./lib.mjs').BatchView | undefined} */
  let view;
  const helpers = await Promise.all(workers.map((worker) => childrenNamed(worker.pid, 'sy-spawner')));
  /** RSS samples: results done so far, and each worker's RSS (MiB, worker + helper). */
  /** @type {{ done: number, seconds: number, rss: number[] }[]} */
  const rssSamples = [];
  /** @param {number} done */
  const sampleRss = async (done) => {
    const per = [];
    for (const [index, worker] of workers.entries()) {
      let kib = await rssKiB(worker.pid);
      for (const helper of helpers[index]) kib += await rssKiB(helper);
      per.push(kib / 1024);
    }
    rssSamples.push({ done, seconds: (performance.now() - runStart) / 1000, rss: per });
  };
  const loads = [await loadAverage()];
  let lastLoad = performance.now();
  for (;;) {
    view = await batches.store.get(batch.batchId, { results: false });
    if (!view) throw new Error(`batch ${batch.batchId} disappeared while it ran`);
    const now = performance.now();
    await sampleRss(view.succeeded + view.failed);
    if (view.state !== 'running') break;
    if (now - lastLoad > 60_000) {
      loads.push(await loadAverage());
      lastLoad = now;
    }
    if (now - lastPrint > 10_000) {
      const done = view.succeeded + view.failed;
      const rate = done / ((now - runStart) / 1000);
      console.error(
        `progress: ${done}/${jobs} (${rate.toFixed(0)} calls/s, about ${((jobs - done) / Math.max(rate, 1) / 60).toFixed(1)} min left)`,
      );
      lastPrint = now;
    }
    await sleep(1_000);
  }
  const runMs = performance.now() - runStart;
  for (const worker of workers) await worker.stop();
  await sleep(500);
  const memCompleted = await usedMemory(client);

  // Payload: the stored result JSON (batch results hash); and what is kept of
  // each project's latest inspection beside it (the latest-inspection field,
  // where a build keeps one, and the fleet-facts entry), measured exactly with
  // HSTRLEN over every field.
  const resultsKey = core.keys.batchResults(batch.batchId);
  let payloadBytes = 0;
  let latestBytes = 0;
  let fleetBytes = 0;
  const ids = await core.redis.hkeys(resultsKey);
  for (let start = 0; start < ids.length; start += 10_000) {
    const pipeline = core.redis.pipeline();
    for (const id of ids.slice(start, start + 10_000)) {
      pipeline.hstrlen(resultsKey, id);
      pipeline.hstrlen(core.keys.latestInspection, `native-fixture/${id}`);
      pipeline.hstrlen(core.keys.fleetFacts('native-fixture'), id);
    }
    const replies = (await pipeline.exec()) ?? [];
    for (let index = 0; index < replies.length; index += 3) {
      payloadBytes += Number(replies[index]?.[1] ?? 0);
      latestBytes += Number(replies[index + 1]?.[1] ?? 0);
      fleetBytes += Number(replies[index + 2]?.[1] ?? 0);
    }
  }
  const resultsKeyBytes = Number(await client.call('MEMORY', 'USAGE', resultsKey, 'SAMPLES', '0'));
  const latestKeyBytes = Number(
    await client.call('MEMORY', 'USAGE', core.keys.latestInspection, 'SAMPLES', '0'),
  );
  // The plugin's fleet copy (facts per project) and its page-order index, written by the record script too.
  const fleetFactsBytes = Number(
    (await client.call('MEMORY', 'USAGE', core.keys.fleetFacts('native-fixture'), 'SAMPLES', '0')) ?? 0,
  );
  const fleetIndexBytes = Number(
    (await client.call('MEMORY', 'USAGE', core.keys.fleetIndex('native-fixture'), 'SAMPLES', '0')) ?? 0,
  );
  const bullKeys = await client.keys(`${core.keys.bullPrefix}:inspect:*`);
  let bullBytes = 0;
  for (const key of bullKeys)
    bullBytes += Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);

  const retained = memCompleted - memBefore;
  const perResult = retained / jobs;
  const payloadPer = payloadBytes / jobs;
  const latestPer = latestBytes / jobs;
  const beyondOne = perResult - payloadPer;
  const beyondStored = perResult - payloadPer - latestPer - fleetBytes / jobs;
  const enqueueRate = (jobs / enqueueMs) * 1000;
  const mib = (/** @type {number} */ bytes) => (bytes / (1 << 20)).toFixed(1);

  console.log(
    `Scale: ${jobs} native-fixture inspections in one batch; set-up wrote ${jobs} project records directly into the projects hash with a pipeline, all pointing at one real directory (${note})\n`,
  );
  console.log(
    table(
      ['measure', 'value'],
      [
        [
          'enqueue (createBatch over all projects)',
          `${(enqueueMs / 1000).toFixed(2)} s = ${enqueueRate.toFixed(0)} jobs/s`,
        ],
        ['used_memory before enqueue (projects registered)', `${mib(memBefore)} MiB`],
        [
          'used_memory after enqueue',
          `${mib(memEnqueued)} MiB (+${((memEnqueued - memBefore) / jobs).toFixed(0)} B per queued job)`,
        ],
        [
          `completion (${WORKERS} workers × concurrency ${CONCURRENCY})`,
          `${(runMs / 1000).toFixed(0)} s = ${((jobs / runMs) * 1000).toFixed(0)} calls/s; ${view?.succeeded} succeeded, ${view?.failed} failed`,
        ],
        [
          'used_memory after completion (default retention)',
          `${mib(memCompleted)} MiB (+${perResult.toFixed(0)} B per result)`,
        ],
        ['result payload (stored result JSON, batch results hash)', `${payloadPer.toFixed(0)} B per result`],
        [
          'latest-inspection field / fleet-facts entry (JSON)',
          `${latestPer.toFixed(0)} B / ${(fleetBytes / jobs).toFixed(0)} B per result`,
        ],
        [
          'MEMORY USAGE batch-results key / latest-inspection key',
          `${(resultsKeyBytes / jobs).toFixed(0)} B / ${(latestKeyBytes / jobs).toFixed(0)} B per result`,
        ],
        [
          'MEMORY USAGE fleet-facts key / fleet-index key (the fleet pages)',
          `${(fleetFactsBytes / jobs).toFixed(0)} B / ${(fleetIndexBytes / jobs).toFixed(0)} B per result`,
        ],
        [`BullMQ inspect keys left (${bullKeys.length} keys)`, `${mib(bullBytes)} MiB`],
        [
          'retained beyond the payload',
          `${beyondOne.toFixed(0)} B per result (beyond every stored JSON: ${beyondStored.toFixed(0)} B)`,
        ],
      ],
    ),
  );
  // RSS over time: the sample nearest each 10,000 results.
  const rssRows = [];
  for (let mark = 0; mark <= jobs; mark += Math.max(1, Math.round(jobs / 10))) {
    const sample = rssSamples.reduce((best, item) =>
      Math.abs(item.done - mark) < Math.abs(best.done - mark) ? item : best,
    );
    rssRows.push([
      String(sample.done),
      sample.seconds.toFixed(0),
      sample.rss.map((mb) => mb.toFixed(1)).join(' / '),
    ]);
  }
  console.log(
    `\nWorker RSS (VmRSS of worker + its spawn helper, MiB) by results done; load average ${loads.join(' → ')}\n`,
  );
  console.log(table(['results done', 's since start', 'RSS per worker (MiB)'], rssRows));
  const afterTenK = rssSamples.filter((sample) => sample.done >= Math.min(10_000, jobs / 10));
  const growth = workers.map((_, index) => {
    const values = afterTenK.map((sample) => sample.rss[index]);
    return { first: values[0] ?? 0, max: Math.max(...values), last: values.at(-1) ?? 0 };
  });
  console.log(
    `\nRSS after the first 10,000 results: ${growth
      .map(
        (g, index) =>
          `worker ${index + 1} ${g.first.toFixed(1)} → max ${g.max.toFixed(1)} → end ${g.last.toFixed(1)} MiB`,
      )
      .join('; ')}`,
  );
  console.log(
    `\nenqueue: ${enqueueRate.toFixed(0)} jobs/s (target ≥ 20,000) ${enqueueRate >= 20_000 ? 'MET' : 'NOT MET'}; memory per retained result beyond the payload: ${(beyondOne / KiB).toFixed(2)} KiB (target ≤ 2 KiB) ${beyondOne <= 2 * KiB ? 'MET' : 'NOT MET'}`,
  );
  client.disconnect();
} finally {
  await cleanup();
}
