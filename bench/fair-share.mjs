// Fair share of the workers (docs/adr/0010-fair-share-inspections.md), in one
// run on one build: native-fixture batches on 2 real worker processes ×
// concurrency 2, the scale of the measurement.
// 1. small behind large: a 5-project batch's time alone, and its time when
//    created one second after a `large`-project batch (target: ratio ≤ 2),
//    alone and behind alternated (ratio of the medians, and median of the rounds');
// 2. two requesters, one large batch each, created together: their calls/s
//    while both run (target 0.8–1.25), and a team of weight 3 against a
//    requester alone (target about 3);
// 3. a large batch alone, fair queue against FIFO order on the same build
//    (SWITCHYARD_INSPECT_ORDER=fifo, a benchmark switch), rounds alternated:
//    calls/s ratio (target ≥ 0.95), after one uncounted warm-up run of each,
//    as the ratio of the medians and as the median of each round's ratio;
// 4. the per-plugin caps held: bench/plugin-caps.mjs run as a child on its
//    own Redis (most calls at once by pid ≤ N under --max-concurrency 2
//    --rate 20/s; the mean rate within 10 % of R under --rate 5/s alone,
//    which binds even on a loaded machine).
//
//   node bench/fair-share.mjs [large=2000] [rounds=3]
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setTeamWeight, TokenStore } from '../dist/core/access/index.js';
import {
  ACTOR,
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  machineNote,
  median,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const large = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);

/** @typedef {import('./lib.mjs').Installation} Installation */

try {
  const note = await machineNote();
  const redis = await startRedis();
  const { makeInstallation } = await import('./lib.mjs');
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const { batches } = install.runtime;
  const big = await addProjects(install, large, { idPrefix: 'l' });
  const other = await addProjects(install, large, { idPrefix: 'o' });
  const small = await addProjects(install, 5, { idPrefix: 's' });
  await Promise.all([startWorker(install, redis.url, 2), startWorker(install, redis.url, 2)]);
  await sleep(2_100); // past the fingerprint cache's racy-ctime window

  /** @param {string} batchId */
  const view = async (batchId) => {
    const found = await batches.store.get(batchId, { results: false });
    if (!found) throw new Error(`batch ${batchId} disappeared`);
    return found;
  };
  /** @param {string} batchId */
  const until = async (batchId) => {
    for (;;) {
      const found = await view(batchId);
      if (found.state !== 'running') return found;
      await sleep(20);
    }
  };
  /** Milliseconds from create to end. @param {string[]} ids @param {string} actor */
  const timed = async (ids, actor = ACTOR) => {
    const started = performance.now();
    const batch = await batches.create('native-fixture', ids, actor);
    await until(batch.batchId);
    return performance.now() - started;
  };

  // 3. throughput alone, fair against FIFO, alternated.
  /** @type {{ fair: number[], fifo: number[] }} */
  const throughput = { fair: [], fifo: [] };
  await timed(small); // warm-up
  // One uncounted run of each order: the first pass over the projects pays for cold caches.
  for (const order of ['fair', 'fifo']) {
    process.env.SWITCHYARD_INSPECT_ORDER = order;
    await timed(big);
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const order of round % 2 === 0 ? ['fair', 'fifo'] : ['fifo', 'fair']) {
      process.env.SWITCHYARD_INSPECT_ORDER = order;
      const ms = await timed(big);
      throughput[/** @type {'fair' | 'fifo'} */ (order)].push(large / (ms / 1000));
      console.error(`alone, ${order}: ${(large / (ms / 1000)).toFixed(1)} calls/s`);
    }
  }
  delete process.env.SWITCHYARD_INSPECT_ORDER;

  // 1. small alone, and behind a large batch created one second before it.
  // Alone and behind alternate, one of each a round: a machine whose load drifts between
  // rounds (other sessions' tests) shifts both alike.
  /** @type {number[]} */
  const alone = [];
  // One call's length, as the bound counts it (a 1-project batch: the call and the batch's overhead).
  /** @type {number[]} */
  const oneCall = [];
  for (let index = 0; index < 3; index += 1) oneCall.push(await timed(small.slice(0, 1)));
  /** @type {number[]} */
  const behind = [];
  for (let round = 0; round < rounds; round += 1) {
    alone.push(await timed(small));
    const first = await batches.create('native-fixture', big, 'big-user');
    await sleep(1_000);
    behind.push(await timed(small, 'small-user'));
    await until(first.batchId);
    console.error(`small behind large: ${behind.at(-1)?.toFixed(0)} ms`);
  }

  // 2. two requesters, then a team of weight 3 against a requester alone.
  const tokens = new TokenStore(install.runtime.redis, install.runtime.keys);
  await tokens.create('carol', 'operator', ACTOR, { team: 'heavy' });
  await setTeamWeight(install.runtime.redis, install.runtime.keys, 'heavy', 3, ACTOR);
  /** Calls/s of each while both run (from 1 s after they start until the first ends). @param {string} one @param {string} two */
  const pair = async (one, two) => {
    const a = await batches.create('native-fixture', big, one);
    const b = await batches.create('native-fixture', other, two);
    await sleep(1_000);
    const done = async (/** @type {string} */ id) => {
      const found = await view(id);
      return found.succeeded + found.failed + found.cancelled;
    };
    const from = [await done(a.batchId), await done(b.batchId), performance.now()];
    let to = from;
    for (;;) {
      const [va, vb] = [await view(a.batchId), await view(b.batchId)];
      if (va.state !== 'running' || vb.state !== 'running') break;
      to = [va.total - va.pending, vb.total - vb.pending, performance.now()];
      await sleep(100);
    }
    await Promise.all([until(a.batchId), until(b.batchId)]);
    const seconds = (to[2] - from[2]) / 1000;
    return [(to[0] - from[0]) / seconds, (to[1] - from[1]) / seconds];
  };
  const [alice, bob] = await pair('alice', 'bob');
  const [carol, dave] = await pair('carol', 'dave');

  // 4. caps: the caps benchmark, on its own Redis and workers, after this one's are done.
  const capsRun = await promisify(execFile)(
    process.execPath,
    [new URL('./plugin-caps.mjs', import.meta.url).pathname, '200', '2', '20', '50', '5'],
    { maxBuffer: 1 << 20 },
  ).catch((/** @type {{ stdout?: string }} */ error) => ({ stdout: error.stdout ?? '' }));
  const [capsBoth = '', capsRateOnly = ''] = /** @type {string} */ (capsRun.stdout).split('phase --rate');
  const capsAtOnce = Number(/most at once: (\d+)/.exec(capsBoth)?.[1] ?? NaN);
  const capsRate = Number(/rate: ([\d.]+)\/s/.exec(capsRateOnly)?.[1] ?? NaN);

  const fairRate = median(throughput.fair);
  // Each round's fair ÷ FIFO (the two ran back to back): steadier than the ratio of medians under drift.
  const paired = median(
    throughput.fair.map((rate, round) => rate / /** @type {number} */ (throughput.fifo[round])),
  );
  const pairedSmall = median(behind.map((ms, round) => ms / /** @type {number} */ (alone[round])));
  const fifoRate = median(throughput.fifo);
  const smallRatio = median(behind) / median(alone);
  const pairRatio = alice / bob;
  const weightedRatio = carol / dave;
  const verdict = (/** @type {boolean} */ met) => (met ? 'MET' : 'NOT MET');
  console.log(`Fair share: 2 workers × 2, native-fixture (${note})\n`);
  console.log(
    `small batch alone ${alone.map((ms) => ms.toFixed(0)).join(', ')} ms; behind ${behind.map((ms) => ms.toFixed(0)).join(', ')} ms; ` +
      `fair ${throughput.fair.map((rate) => rate.toFixed(1)).join(', ')} / FIFO ${throughput.fifo.map((rate) => rate.toFixed(1)).join(', ')} calls/s\n`,
  );
  console.log(
    table(
      ['figure', 'value', 'target', ''],
      [
        [
          `small (5) behind a ${large}-project batch ÷ alone`,
          `${smallRatio.toFixed(2)} (${median(behind).toFixed(0)} ms ÷ ${median(alone).toFixed(0)} ms)`,
          '≤ 2',
          verdict(smallRatio <= 2),
        ],
        [
          'small behind large ÷ alone, median of the rounds (each alone run just before its behind run)',
          pairedSmall.toFixed(2),
          '≤ 2',
          verdict(pairedSmall <= 2),
        ],
        [
          "small behind large ÷ (2 × alone + one call), the issue's bound",
          `${(median(behind) / (2 * median(alone) + median(oneCall))).toFixed(2)} (one call ${median(oneCall).toFixed(0)} ms)`,
          '≤ 1',
          verdict(median(behind) <= 2 * median(alone) + median(oneCall)),
        ],
        [
          'two requesters, calls/s ratio',
          `${pairRatio.toFixed(2)} (${alice.toFixed(1)} ÷ ${bob.toFixed(1)})`,
          '0.8–1.25',
          verdict(pairRatio >= 0.8 && pairRatio <= 1.25),
        ],
        [
          'team of weight 3 ÷ requester alone, calls/s',
          `${weightedRatio.toFixed(2)} (${carol.toFixed(1)} ÷ ${dave.toFixed(1)})`,
          'about 3 (2.4–3.75)',
          verdict(weightedRatio >= 2.4 && weightedRatio <= 3.75),
        ],
        [
          `a ${large}-project batch alone, fair ÷ FIFO calls/s`,
          `${(fairRate / fifoRate).toFixed(3)} (${fairRate.toFixed(1)} ÷ ${fifoRate.toFixed(1)})`,
          '≥ 0.95',
          verdict(fairRate / fifoRate >= 0.95),
        ],
        [
          `a ${large}-project batch alone, fair ÷ FIFO, median of the rounds' ratios (run back to back)`,
          paired.toFixed(3),
          '≥ 0.95',
          verdict(paired >= 0.95),
        ],
        [
          'plugin caps --max-concurrency 2 --rate 20/s (2 workers × 4): most at once by pid',
          String(capsAtOnce),
          '≤ 2',
          verdict(capsAtOnce <= 2),
        ],
        [
          'plugin caps --rate 5/s alone: mean calls/s (what the plugin saw)',
          capsRate.toFixed(2),
          '5 ± 10 %',
          verdict(capsRate >= 4.5 && capsRate <= 5.5),
        ],
      ],
    ),
  );
} finally {
  await cleanup();
}
