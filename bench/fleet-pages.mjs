// The fleet's pages (GET /api/v1/plugins/:id/facts, what the Fleet page and
// `facts` read) over a fleet of N projects, through a real api process: the
// time of each page request of 100 rows, walked with the cursor from the
// first page to the last, unfiltered and with a --where filter that half the
// fleet matches, and the first pages sorted by a fact (sorting needs the
// whole fleet, whatever the page). Set-up: N project records written straight
// into the projects hash (bench/lib.mjs addProjects) and one recorded batch
// over them through the batch store (as a worker records, the fleet facts
// with it); the fixture-inspector package only makes the plugin known.
//
//   node bench/fleet-pages.mjs [projects=10000] [pages=all]
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { URLSearchParams } from 'node:url';
import {
  FIXTURE_INSPECTOR_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  median,
  percentile,
  sleep,
  startApi,
  startRedis,
  table,
} from './lib.mjs';

const count = Number(process.argv[2] ?? 10_000);
const pageLimit = process.argv[3] === undefined ? Infinity : Number(process.argv[3]);
const PLUGIN = 'fixture-inspector';
const PAGE = 100;

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
  for (let start = 0; start < ids.length; start += 1_000) {
    await store.recordAll(
      batch.batchId,
      PLUGIN,
      ids.slice(start, start + 1_000).map((projectId, offset) => ({
        projectId,
        status: /** @type {const} */ ('succeeded'),
        result: {
          summary: '3 facts',
          facts: [
            { id: 'go.version', label: 'Go', value: `1.${(start + offset) % 24}`, source: 'go.mod' },
            { id: 'ci.system', label: 'CI', value: offset % 3 === 0 ? 'jenkins' : 'gha', source: 'ci' },
            { id: 'owner', label: 'Owner', value: `team-${offset % 40}`, source: 'CODEOWNERS' },
          ],
          actions: [],
          warnings: [],
          observedAt,
        },
      })),
    );
  }

  const { port } = await startApi(install, redis.url);
  const token = await untilToken(join(install.dataDir, 'api-token'));
  const base = `http://127.0.0.1:${port}/api/v1/plugins/${PLUGIN}/facts`;
  /** @param {string} query */
  const get = async (query) => {
    for (;;) {
      const response = await globalThis
        .fetch(`${base}?${query}`, {
          headers: { authorization: `Bearer ${token}` },
        })
        .catch(() => undefined);
      if (response?.ok)
        return /** @type {{ items: unknown[], nextCursor?: string }} */ (await response.json());
      if (response && response.status !== 503) throw new Error(`${response.status} ${await response.text()}`);
      await sleep(100);
    }
  };
  await get(`limit=1`); // the api is up

  /**
   * Walks the pages of one query with the cursor; each request's wall time.
   * @param {Record<string, string>} params
   * @param {number} maxPages
   */
  const walk = async (params, maxPages) => {
    /** @type {number[]} */
    const times = [];
    let rows = 0;
    /** @type {string | undefined} */
    let cursor;
    do {
      const query = new URLSearchParams({ ...params, limit: String(PAGE), ...(cursor ? { cursor } : {}) });
      const started = performance.now();
      const page = await get(String(query));
      times.push(performance.now() - started);
      rows += page.items.length;
      cursor = page.nextCursor;
    } while (cursor && times.length < maxPages);
    return { times, rows };
  };

  const runs = [
    ['no filter, by project id', {}, pageLimit],
    ['where go.version>=1.12 (half)', { where: 'go.version>=1.12' }, pageLimit],
    ['sorted by go.version', { sort: 'go.version' }, Math.min(pageLimit, 10)],
  ];
  const rows = [];
  for (const [name, params, maxPages] of /** @type {[string, Record<string, string>, number][]} */ (runs)) {
    await walk(params, 2); // warm
    const { times, rows: read } = await walk(params, maxPages);
    rows.push([
      name,
      String(times.length),
      String(read),
      times[0]?.toFixed(1) ?? '',
      median(times).toFixed(1),
      percentile(times, 95).toFixed(1),
      times.reduce((a, b) => a + b, 0).toFixed(0),
    ]);
  }
  console.log(note);
  console.log(`fleet of ${count.toLocaleString('en')} projects, pages of ${PAGE}\n`);
  console.log(
    table(['query', 'pages', 'rows', 'first page ms', 'median ms/page', 'p95 ms/page', 'all pages ms'], rows),
  );
} finally {
  await cleanup();
}

/** @param {string} file the api writes its first admin token there as it starts */
async function untilToken(file) {
  for (let tries = 0; tries < 300; tries++) {
    const token = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (token) return token;
    await sleep(100);
  }
  throw new Error(`no api token at ${file}`);
}
