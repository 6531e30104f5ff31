// The embedded Redis AOF choice: the same N-project native-fixture batch
// (2 worker processes × concurrency 2) against a redis-server with
// --appendfsync always and one with --appendfsync everysec (both AOF on, unix
// socket like `switchyard up`'s embedded Redis). Each Redis has its own
// installation and workers; batches alternate between the two, order rotated
// each round; the median wall time counts.
//
//   node bench/aof.mjs [projects=2000] [rounds=3]
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  median,
  runBatch,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);

try {
  const note = await machineNote();
  /** @type {Record<string, { redis: import('./lib.mjs').BenchRedis, install: import('./lib.mjs').Installation, ids: string[], times: number[] }>} */
  const setups = {};
  for (const appendfsync of /** @type {const} */ (['always', 'everysec'])) {
    const redis = await startRedis({ appendfsync, transport: 'unix' });
    const install = await makeInstallation(redis.url, [
      { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
    ]);
    const ids = await addProjects(install, projects);
    await startWorker(install, redis.url, 2);
    await startWorker(install, redis.url, 2);
    setups[appendfsync] = { redis, install, ids, times: [] };
  }
  await sleep(2_100); // past the fingerprint cache's racy-ctime window
  for (const setup of Object.values(setups)) {
    await runBatch(setup.install, 'native-fixture', setup.ids.slice(0, 40), { pollMs: 20 }); // warm-up
  }
  const names = Object.keys(setups);
  for (let round = 0; round < rounds; round += 1) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const setup = /** @type {(typeof setups)[string]} */ (setups[name]);
      const { batch, ms } = await runBatch(setup.install, 'native-fixture', setup.ids, {
        pollMs: 20,
      });
      if (batch.succeeded !== projects) throw new Error(`${name}: ${batch.failed} failed`);
      setup.times.push(ms);
      console.error(`round ${round + 1}/${rounds} appendfsync ${name}: ${(ms / 1000).toFixed(2)} s`);
    }
  }
  /** @param {string} name */
  const times = (name) => setups[name]?.times ?? [];
  /** @param {string} name */
  const wall = (name) => median(times(name));
  console.log(
    `AOF fsync policy, ${projects}-project native-fixture batch, 2 workers × 2, unix socket (${note})\n`,
  );
  console.log(
    table(
      ['appendfsync', 'wall s (median)', 'calls/s', `wall s per round (${rounds} rounds)`],
      names.map((name) => [
        name,
        (wall(name) / 1000).toFixed(2),
        ((projects / wall(name)) * 1000).toFixed(0),
        times(name)
          .map((ms) => (ms / 1000).toFixed(2))
          .join(', '),
      ]),
    ),
  );
  console.log(`\nwall time always ÷ everysec: ${(wall('always') / wall('everysec')).toFixed(3)}`);
} finally {
  await cleanup();
}
