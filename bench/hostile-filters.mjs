// /healthz while one client sends hostile fact filters, through a real api
// process: a fleet of N projects whose pkg.version is 28 a's and a ! (a
// value anyone with a commit can set), and 20 viewer tokens each sending
// `where=pkg.version~^(a+)+$` (catastrophic for a backtracking engine) 25
// times back to back. Prints /healthz p50/p99 idle and while the 20 run, the
// hostile requests' own times, and for comparison what the backtracking
// engine (V8's RegExp) takes on ONE such value of growing length in this
// process. Set-up as bench/fleet-pages.mjs: records written through the batch store.
//
//   node bench/hostile-filters.mjs [projects=2000]
import {
  FIXTURE_INSPECTOR_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  percentile,
  sleep,
  startApi,
  startRedis,
  table,
} from './lib.mjs';

const count = Number(process.argv[2] ?? 2_000);
const PLUGIN = 'fixture-inspector';
const HOSTILE_CLIENTS = 20;
const REQUESTS_EACH = 25;
const VALUE = `${'a'.repeat(28)}!`;

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: PLUGIN, from: FIXTURE_INSPECTOR_DIST, id: PLUGIN, enable: false },
  ]);
  const ids = await addProjects(install, count);
  const { store } = install.runtime.batches;
  const batch = await store.create(PLUGIN, ids, 'user:bench');
  const observedAt = new Date().toISOString();
  for (let start = 0; start < ids.length; start += 1_000)
    await store.recordAll(
      batch.batchId,
      PLUGIN,
      ids.slice(start, start + 1_000).map((projectId) => ({
        projectId,
        status: /** @type {const} */ ('succeeded'),
        result: {
          summary: '1 fact',
          facts: [{ id: 'pkg.version', label: 'Version', value: VALUE, source: 'package.json' }],
          actions: [],
          warnings: [],
          observedAt,
        },
      })),
    );
  const tokens = await Promise.all(
    Array.from({ length: HOSTILE_CLIENTS }, async (_, index) => {
      const made = await install.runtime.tokens.create(`hostile-${index}`, 'viewer', 'user:bench');
      return made.token;
    }),
  );

  const { base } = await startApi(install, redis.url);
  const healthz = async () => {
    const started = performance.now();
    const response = await globalThis.fetch(`${base}/healthz`).catch(() => undefined);
    await response?.arrayBuffer();
    return { ms: performance.now() - started, ok: response !== undefined };
  };

  /** @param {number} n */
  const probe = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      times.push((await healthz()).ms);
      await sleep(10);
    }
    return times;
  };
  const idle = await probe(200);

  const hostile = `${base}/api/v1/plugins/${PLUGIN}/facts?where=${encodeURIComponent('pkg.version~^(a+)+$')}&limit=100`;
  /** @type {number[]} */
  const hostileTimes = [];
  /** @type {Record<string, number>} */
  const statuses = {};
  let running = true;
  const probing = (async () => {
    const times = [];
    while (running) {
      times.push((await healthz()).ms);
      await sleep(10);
    }
    return times;
  })();
  const started = performance.now();
  await Promise.all(
    tokens.map(async (token) => {
      for (let i = 0; i < REQUESTS_EACH; i++) {
        const begun = performance.now();
        const response = await globalThis.fetch(hostile, { headers: { authorization: `Bearer ${token}` } });
        await response.arrayBuffer();
        hostileTimes.push(performance.now() - begun);
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    }),
  );
  const wall = performance.now() - started;
  running = false;
  const loaded = await probing;

  const row = (/** @type {string} */ name, /** @type {number[]} */ times) => [
    name,
    String(times.length),
    percentile(times, 50).toFixed(1),
    percentile(times, 99).toFixed(1),
    Math.max(...times).toFixed(1),
  ];
  console.log(`hostile fact filters: ${count} projects with pkg.version ${VALUE}; ${note}`);
  console.log(
    table(
      ['requests', 'n', 'p50 ms', 'p99 ms', 'max ms'],
      [
        row('/healthz, idle', idle),
        row(`/healthz, ${HOSTILE_CLIENTS} hostile clients`, loaded),
        row('hostile filter requests', hostileTimes),
      ],
    ),
  );
  console.log(
    `hostile requests: ${hostileTimes.length} in ${(wall / 1000).toFixed(1)} s, statuses ${JSON.stringify(statuses)}; /healthz p99 loaded/idle ${(percentile(loaded, 99) / percentile(idle, 99)).toFixed(1)}x`,
  );
  // What one value costs a backtracking engine (the api's engine before RE2), in this process.
  const backtracking = [18, 20, 22, 24].map((n) => {
    const begun = performance.now();
    /^(a+)+$/.test(`${'a'.repeat(n)}!`);
    return [`${n} a's and !`, (performance.now() - begun).toFixed(1)];
  });
  console.log('V8 RegExp ^(a+)+$ on one value (each extra a doubles it; the fleet above has 28):');
  console.log(table(['value', 'ms'], backtracking));
} finally {
  await cleanup();
}
