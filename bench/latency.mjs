// Latency of one inspection: enqueue (createBatch over one project) → durable
// result (the batch record's Lua script publishes on the batch events channel
// after HSETNX of the result; we PSUBSCRIBE to every batch's channel before
// creating, so no event can be missed), against a direct supervisor call
// (core.plugins.inspect in this process). One worker process, concurrency 1.
// The two variants alternate call by call. Target: p50 overhead ≤ 8 idle Redis round trips measured in the same
// run (docs/adr/0008; it was 2 ms, which moved with the machine).
//
// Two pacings, in the same run: back to back (each call starts the moment the
// previous one ends, so the worker's completion bookkeeping of the previous
// job — BullMQ moveToFinished and the fetch of the next — and the previous
// plugin's exit overlap the next call), and spaced (a pause of `gap` ms first,
// the latency of one inspection on an otherwise idle system — the target).
//
//   node bench/latency.mjs [runs=200] [gap ms=25]
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
const gapMs = Number(process.argv[3] ?? 25);
/** The overhead of one inspection over a direct call, in idle Redis round trips of the same run. */
const ROUND_TRIPS_TARGET = 8;

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const [projectId] = await addProjects(install, 1);
  const worker = await startWorker(install, redis.url, 1);
  const { batches } = install.runtime;
  const core = install.runtime; // its plugins, redis and keys
  await sleep(2_100); // let the package copy age past the fingerprint cache's racy window

  /** @typedef {{ at: number, message: string }} Arrival */
  /** @type {Map<string, Arrival>} */
  const arrivals = new Map();
  /** @type {Map<string, (arrival: Arrival) => void>} */
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
  /**
   * The first message on `channel`, already heard or still to come.
   * @param {string} channel
   * @returns {Promise<Arrival>}
   */
  const event = (channel) => {
    const heard = arrivals.get(channel);
    return heard ? Promise.resolve(heard) : new Promise((resolve) => waiters.set(channel, resolve));
  };

  async function orchestrated() {
    const started = performance.now();
    const batch = await batches.create('native-fixture', [projectId], ACTOR);
    const { at, message } = await event(batches.store.eventsChannel(batch.batchId));
    if (JSON.parse(message).status !== 'succeeded') throw new Error(`inspection failed: ${message}`);
    return at - started;
  }
  async function direct() {
    const started = performance.now();
    await core.plugins.inspect('native-fixture', projectId);
    return performance.now() - started;
  }

  // Warm-up: V8 compiles the hot code of the worker and of this process with its optimizing tiers only
  // after hundreds of calls (a worker that has run for a while).
  for (let index = 0; index < 300; index += 1) {
    await orchestrated();
    await direct();
  }
  /** @typedef {{ orchestrated: number[], direct: number[] }} Samples */
  /**
   * Runs of both variants, alternating which goes first; `pause` ms before each call.
   * @param {number} pause
   * @returns {Promise<Samples>}
   */
  async function measure(pause) {
    /** @type {Samples} */
    const samples = { orchestrated: [], direct: [] };
    /**
     * @param {keyof Samples} name
     * @param {() => Promise<number>} variant
     */
    const one = async (name, variant) => {
      if (pause > 0) await sleep(pause);
      samples[name].push(await variant());
    };
    for (let index = 0; index < runs; index += 1) {
      if (index % 2 === 0) {
        await one('orchestrated', orchestrated);
        await one('direct', direct);
      } else {
        await one('direct', direct);
        await one('orchestrated', orchestrated);
      }
    }
    return samples;
  }
  const backToBack = await measure(0);
  const spaced = await measure(gapMs);
  // What one hop costs here: a PING round trip after the same pause. The
  // orchestrated path has about five more hops than the direct call (enqueue,
  // the worker's wake-up and moveToActive, the result record, its event).
  /** @type {number[]} */
  const pings = [];
  for (let index = 0; index < runs; index += 1) {
    await sleep(gapMs);
    const started = performance.now();
    await core.redis.ping();
    pings.push(performance.now() - started);
  }
  subscriber.disconnect();
  await worker.stop();

  /** @type {string[][]} */
  const rows = [];
  /** @type {Record<string, number>} */
  const overheads = {};
  /** @type {[string, Samples][]} */
  const pacings = [
    ['back to back', backToBack],
    [`spaced by ${gapMs} ms`, spaced],
  ];
  for (const [pacing, samples] of pacings) {
    const [op50, op95] = [percentile(samples.orchestrated, 50), percentile(samples.orchestrated, 95)];
    const [dp50, dp95] = [percentile(samples.direct, 50), percentile(samples.direct, 95)];
    rows.push(
      [`${pacing}: enqueue → durable result (1 worker, concurrency 1)`, op50.toFixed(2), op95.toFixed(2)],
      [`${pacing}: direct supervisor call (core.plugins.inspect)`, dp50.toFixed(2), dp95.toFixed(2)],
      [`${pacing}: overhead (orchestrated − direct)`, (op50 - dp50).toFixed(2), (op95 - dp95).toFixed(2)],
    );
    overheads[pacing] = op50 - dp50;
  }
  console.log(`Latency of one inspection, native-fixture, ${runs} runs each, alternating (${note})\n`);
  rows.push([
    `one Redis round trip (PING) after ${gapMs} ms idle`,
    percentile(pings, 50).toFixed(2),
    percentile(pings, 95).toFixed(2),
  ]);
  console.log(table(['variant', 'p50 ms', 'p95 ms'], rows));
  const overhead = overheads[`spaced by ${gapMs} ms`] ?? NaN;
  console.log(
    `\np50 overhead of one inspection (spaced): ${overhead.toFixed(2)} ms = ${(overhead / percentile(pings, 50)).toFixed(1)} idle round trips of ${percentile(pings, 50).toFixed(3)} ms (target ≤ ${ROUND_TRIPS_TARGET}) ${overhead / percentile(pings, 50) <= ROUND_TRIPS_TARGET ? 'MET' : 'NOT MET'}; back to back: ${(overheads['back to back'] ?? NaN).toFixed(2)} ms`,
  );
} finally {
  await cleanup();
}
