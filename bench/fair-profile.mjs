// Where the fair queue's time goes (ADR 0010), counted rather than timed, so
// a loaded machine does not blur it: 2 worker processes × concurrency 2,
// native fixture, its own redis-server.
// 1. A large batch alone, fair order and FIFO order alternated: Redis
//    commands per call (INFO commandstats deltas, the bench's polling left
//    out), EVALSHA per call, and calls/s.
// 2. A small batch created 1 s after a large one (fair order), under
//    MONITOR: every command of the workers from the small batch's creation
//    to its end, the scripts by name (our Lua files by SHA1; BullMQ's by the
//    queue key they touch), commands per call of the small batch's window,
//    and the wait from each of the small batch's slices being picked to its
//    job being taken, and from the small batch's creation to its first pick.
//
//   node bench/fair-profile.mjs [large=1000] [rounds=2]
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  NATIVE_FIXTURE_DIST,
  REPO,
  addProjects,
  cleanup,
  connect,
  machineNote,
  makeInstallation,
  median,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const large = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 2);

/** @param {string} text */
function commandStats(text) {
  /** @type {Map<string, number>} */
  const stats = new Map();
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) stats.set(match[1], Number(match[2]));
  }
  return stats;
}

/** Our scripts' SHA1 → name (ioredis loads each by its body's SHA1). */
async function scriptNames() {
  const dir = join(REPO, 'dist', 'core', 'redis', 'lua');
  /** @type {Map<string, string>} */
  const names = new Map();
  for (const file of await readdir(dir)) {
    const body = await readFile(join(dir, file), 'utf8');
    names.set(createHash('sha1').update(body).digest('hex'), file.replace(/\.lua$/, ''));
  }
  return names;
}

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const { batches } = install.runtime;
  const big = await addProjects(install, large, { idPrefix: 'l' });
  const small = await addProjects(install, 5, { idPrefix: 's' });
  await Promise.all([startWorker(install, redis.url, 2), startWorker(install, redis.url, 2)]);
  await sleep(2_100);
  const client = connect(redis.url);
  await client.connect();

  /** @param {string} batchId */
  const until = async (batchId) => {
    for (;;) {
      const found = await batches.store.get(batchId, { results: false });
      if (found && found.state !== 'running') return found;
      await sleep(50);
    }
  };
  /** @param {string[]} ids @param {string} actor */
  const timed = async (ids, actor = 'user:bench') => {
    const started = performance.now();
    const batch = await batches.create('native-fixture', ids, actor);
    await until(batch.batchId);
    return performance.now() - started;
  };
  await timed(small);
  await timed(big);

  // 1. alone, fair and FIFO alternated.
  /** @type {Record<string, { total: number[], evalsha: number[], rate: number[], by: Map<string, number[]> }>} */
  const alone = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const order of round % 2 === 0 ? ['fair', 'fifo'] : ['fifo', 'fair']) {
      process.env.SWITCHYARD_INSPECT_ORDER = order;
      await client.config('RESETSTAT');
      const ms = await timed(big);
      const stats = commandStats(await client.info('commandstats'));
      for (const own of ['info', 'config|resetstat', 'hgetall', 'hmget']) stats.delete(own);
      const slot = (alone[order] ??= { total: [], evalsha: [], rate: [], by: new Map() });
      slot.total.push([...stats.values()].reduce((sum, n) => sum + n, 0) / large);
      slot.evalsha.push((stats.get('evalsha') ?? 0) / large);
      slot.rate.push(large / (ms / 1000));
      for (const [name, n] of stats) slot.by.set(name, [...(slot.by.get(name) ?? []), n / large]);
      console.error(`alone ${order}: ${(large / (ms / 1000)).toFixed(1)} calls/s`);
    }
  }
  delete process.env.SWITCHYARD_INSPECT_ORDER;

  // 2. small behind large, under MONITOR.
  const names = await scriptNames();
  const monitor = await client.monitor();
  /** @type {{ at: number, args: string[] }[]} */
  const seen = [];
  monitor.on('monitor', (/** @type {string} */ time, /** @type {string[]} */ args) =>
    seen.push({ at: Number(time) * 1000, args }),
  );
  /** @type {{ window: number, perCall: number, firstPick: number, pickToTake: number, scripts: Map<string, number> }[]} */
  const mixed = [];
  for (let round = 0; round < rounds; round += 1) {
    const first = await batches.create('native-fixture', big, 'user:big');
    await sleep(1_000);
    seen.length = 0;
    const startedAt = Date.now();
    const created = await batches.create('native-fixture', small, 'user:small');
    await until(created.batchId);
    const endedAt = Date.now();
    const window = seen.filter((entry) => entry.at >= startedAt - 5 && entry.at <= endedAt);
    /** @type {Map<string, number>} */
    const scripts = new Map();
    for (const { args } of window) {
      const command = (args[0] ?? '').toLowerCase();
      let name = command;
      if (command === 'evalsha') {
        const sha = args[1] ?? '';
        name = names.get(sha) ?? `bullmq ${(args[3] ?? '').split(':').slice(-2).join(':')}`;
      }
      scripts.set(name, (scripts.get(name) ?? 0) + 1);
    }
    // The small batch's picks (fair-pick answers are not in MONITOR: its slice records are) and takes.
    const picks = window.filter(
      ({ args }) =>
        (args[0] ?? '').toLowerCase() === 'hset' &&
        /fair:slices$/.test(args[1] ?? '') &&
        (args[2] ?? '').startsWith(created.batchId),
    );
    const takes = window.filter(
      ({ args }) =>
        (args[0] ?? '').toLowerCase() === 'hset' &&
        /fair:holders$/.test(args[1] ?? '') &&
        (args[2] ?? '').startsWith(created.batchId),
    );
    const pickAt = new Map(picks.map(({ at, args }) => [args[2], at]));
    const waits = takes.map(({ at, args }) => at - (pickAt.get(args[2]) ?? at));
    mixed.push({
      window: endedAt - startedAt,
      perCall: window.length / Math.max(1, (endedAt - startedAt) / 1000),
      firstPick: (picks[0]?.at ?? endedAt) - startedAt,
      pickToTake: median(waits.length ? waits : [0]),
      scripts,
    });
    console.error(
      `mixed: small ${endedAt - startedAt} ms, first pick after ${((picks[0]?.at ?? endedAt) - startedAt).toFixed(0)} ms, ` +
        `pick → take ${waits.map((w) => w.toFixed(0)).join(', ')} ms`,
    );
    await until(first.batchId);
  }
  monitor.disconnect();
  client.disconnect();

  console.log(`Fair-queue profile: 2 workers × 2, native-fixture, ${large} projects (${note})\n`);
  const names1 = [...new Set(Object.values(alone).flatMap((slot) => [...slot.by.keys()]))]
    .map((name) => [name, median(alone.fair?.by.get(name) ?? [0]), median(alone.fifo?.by.get(name) ?? [0])])
    .filter(([, a, b]) => Number(a) + Number(b) >= 0.01)
    .sort((x, y) => Number(y[1]) - Number(x[1]));
  console.log(
    table(
      ['alone: per call', 'fair', 'FIFO'],
      [
        [
          'calls/s (median)',
          median(alone.fair?.rate ?? [0]).toFixed(1),
          median(alone.fifo?.rate ?? [0]).toFixed(1),
        ],
        [
          'Redis commands',
          median(alone.fair?.total ?? [0]).toFixed(3),
          median(alone.fifo?.total ?? [0]).toFixed(3),
        ],
        ...names1.map(([name, a, b]) => [String(name), Number(a).toFixed(3), Number(b).toFixed(3)]),
      ],
    ),
  );
  console.log('');
  const all = [...new Set(mixed.flatMap((round) => [...round.scripts.keys()]))]
    .map((name) => [name, median(mixed.map((round) => round.scripts.get(name) ?? 0))])
    .sort((x, y) => Number(y[1]) - Number(x[1]));
  console.log(
    table(
      ['small behind large (medians)', 'value'],
      [
        ['small batch, create → end (ms)', median(mixed.map((r) => r.window)).toFixed(0)],
        ['create → its first slice picked (ms)', median(mixed.map((r) => r.firstPick)).toFixed(0)],
        ['its slice picked → its job taken (ms)', median(mixed.map((r) => r.pickToTake)).toFixed(0)],
        ...all.slice(0, 25).map(([name, n]) => [`commands in the window: ${name}`, String(n)]),
      ],
    ),
  );
} finally {
  await cleanup();
}
