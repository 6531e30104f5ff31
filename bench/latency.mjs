// Latency of one inspection: enqueue (createBatch over one project) → durable
// result (the batch record's Lua script publishes on the batch events channel
// after HSETNX of the result; we PSUBSCRIBE to every batch's channel before
// creating, so no event can be missed), against a direct supervisor call
// (core.plugins.inspect in this process). One worker process, concurrency 1.
// The two variants alternate call by call. Target: p50 overhead ≤ 3 ms.
//
//   node bench/latency.mjs [runs=200]
import {
  NATIVE_FIXTURE_DIST,
  ACTOR,
  addProjects,
  cleanup,
  connect,
  machineNote,
  makeInstallation,
  percentile,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const runs = Number(process.argv[2] ?? 200);

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const [projectId] = await addProjects(install, 1);
  const worker = await startWorker(install, redis.url, 1);
  const { core, work } = install.runtime;
  await sleep(2_100); // let the package copy age past the fingerprint cache's racy window

  const arrivals = new Map();
  const waiters = new Map();
  const subscriber = connect(redis.url);
  await subscriber.connect();
  await subscriber.psubscribe(`${core.keys.prefix}:batch-events:*`);
  subscriber.on('pmessage', (_pattern, channel, message) => {
    const at = performance.now();
    const waiter = waiters.get(channel);
    if (waiter) waiter({ at, message });
    else arrivals.set(channel, { at, message });
  });
  const event = (channel) =>
    arrivals.has(channel)
      ? Promise.resolve(arrivals.get(channel))
      : new Promise((resolve) => waiters.set(channel, resolve));

  async function orchestrated() {
    const started = performance.now();
    const batch = await work.createBatch('native-fixture', [projectId], ACTOR);
    const { at, message } = await event(work.batches.eventsChannel(batch.batchId));
    if (JSON.parse(message).status !== 'succeeded') throw new Error(`inspection failed: ${message}`);
    return at - started;
  }
  async function direct() {
    const started = performance.now();
    await core.plugins.inspect('native-fixture', projectId);
    return performance.now() - started;
  }

  for (let index = 0; index < 10; index += 1) {
    await orchestrated();
    await direct();
  }
  const samples = { orchestrated: [], direct: [] };
  for (let index = 0; index < runs; index += 1) {
    if (index % 2 === 0) {
      samples.orchestrated.push(await orchestrated());
      samples.direct.push(await direct());
    } else {
      samples.direct.push(await direct());
      samples.orchestrated.push(await orchestrated());
    }
  }
  subscriber.disconnect();
  await worker.stop();

  const stat = (name) => [percentile(samples[name], 50), percentile(samples[name], 95)];
  const [op50, op95] = stat('orchestrated');
  const [dp50, dp95] = stat('direct');
  console.log(`Latency of one inspection, native-fixture, ${runs} runs each, alternating (${note})\n`);
  console.log(
    table(
      ['variant', 'p50 ms', 'p95 ms'],
      [
        ['enqueue → durable result (1 worker process, concurrency 1)', op50.toFixed(2), op95.toFixed(2)],
        ['direct supervisor call (core.plugins.inspect)', dp50.toFixed(2), dp95.toFixed(2)],
        ['overhead (orchestrated − direct)', (op50 - dp50).toFixed(2), (op95 - dp95).toFixed(2)],
      ],
    ),
  );
  const overhead = op50 - dp50;
  console.log(
    `\np50 overhead: ${overhead.toFixed(2)} ms (target ≤ 3 ms) ${overhead <= 3 ? 'MET' : 'NOT MET'}; ratio orchestrated ÷ direct p50: ${(op50 / dp50).toFixed(3)}`,
  );
} finally {
  await cleanup();
}
