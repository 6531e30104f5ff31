// The fleet's pages by project id at 10,000 projects: a page is read through
// the plugin's fleet index (a page's own rows, not the whole fleet), and
// walking the pages with and without filters gives every row the full read
// (fleet()) gives, once, in the same order: project ids with `_`, `-` and `.`
// ordered as localeCompare orders them, as the fleet always was. Facts
// recorded before the index existed are indexed on the first page read; a
// forgotten project's facts stay out, as they do from the full read. The
// api's cursor walk (GET /plugins/:id/facts) gives the same rows.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FleetRow } from '../../src/core/work/batches/index.js';
import type { Runtime } from '../../src/core/runtime/index.js';
import {
  globalArgs,
  requireBuiltCli,
  spawnCliProcess,
  terminate,
  untilLogged,
} from '../support/cli-process.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { freePort } from '../support/redis.js';
import { inspected, seedBatch } from '../support/seed-batches.js';
import { ACTOR, PLUGIN_ID } from '../support/workers.js';

const suite = useQueueSuite('fleet pages');

const FLEET = 10_000;
const SEPARATORS = ['-', '_', '.', ''];
/** Ids whose order as text differs from code-unit order where `_` meets `-`, `.` and digits. */
const idOf = (index: number) =>
  `svc${SEPARATORS[index % 4]}${String(Math.floor(index / 4)).padStart(4, '0')}${SEPARATORS[(index >> 2) % 4]}x`;
const versionOf = (index: number) => `1.${index % 24}`;

/** Every page of a query, walked by the last row's project id; each page's size. */
async function walk(
  batches: Runtime['batches'],
  query: { where?: string[]; labels?: string[] },
  limit: number,
): Promise<{ rows: FleetRow[]; pages: number }> {
  const rows: FleetRow[] = [];
  let pages = 0;
  let after: string | undefined;
  for (;;) {
    const page = await batches.fleetPage(PLUGIN_ID, { ...query, after, limit });
    pages += 1;
    rows.push(...page.items);
    if (!page.more) return { rows, pages };
    expect(page.items).toHaveLength(limit);
    after = page.items.at(-1)!.projectId;
  }
}

const ids = (rows: FleetRow[]) => rows.map((row) => row.projectId);

describe('fleet pages', () => {
  it(`${FLEET} projects: every row once, in the full read's order, with and without filters`, async () => {
    requireBuiltCli();
    const installation = await suite.install('fleet-pages');
    const { runtime, projectsDir } = installation;
    const { redis, keys } = runtime;
    const names = Array.from({ length: FLEET }, (_, index) => idOf(index));
    expect(new Set(names).size).toBe(FLEET);
    // Set-up: the registry written straight (scan audits each of 10,000 adds); every 3rd has label "go".
    const pipeline = redis.pipeline();
    names.forEach((id, index) =>
      pipeline.hset(
        keys.projects,
        id,
        JSON.stringify({
          id,
          displayName: id,
          root: join(projectsDir, id),
          trusted: true,
          labels: index % 3 === 0 ? ['go'] : [],
        }),
      ),
    );
    await pipeline.exec();
    await seedBatch(runtime, PLUGIN_ID, names, (id, index) =>
      inspected(id, { 'go.version': versionOf(index) }),
    );
    // A project forgotten after its inspection: its facts stay in the hash, out of every answer.
    const forgotten = names[5]!;
    await runtime.projects.remove(forgotten, ACTOR);

    const { batches } = runtime;
    const full = await batches.fleet(PLUGIN_ID);
    expect(full).toHaveLength(FLEET - 1);
    // The order the fleet always had: localeCompare's.
    expect(ids(full)).toEqual(names.filter((id) => id !== forgotten).sort((a, b) => a.localeCompare(b)));
    expect(await redis.zcard(keys.fleetIndex(PLUGIN_ID))).toBe(FLEET);

    // No filter: 100 pages of 100 (the last of 99), each row once, in order.
    const all = await walk(batches, {}, 100);
    expect(all.pages).toBe(100);
    expect(ids(all.rows)).toEqual(ids(full));
    expect(all.rows).toEqual(full);

    // A where filter (half the fleet), a label (a third), both: as the full read filters them.
    for (const query of [
      { where: ['go.version>=1.12'] },
      { labels: ['go'] },
      { where: ['go.version>=1.12'], labels: ['go'] },
      { where: ['go.version=1.23'] },
      { where: ['go.version=9'] },
    ]) {
      const expected = ids(await batches.fleet(PLUGIN_ID, query));
      const paged = await walk(batches, query, 250);
      expect(ids(paged.rows), JSON.stringify(query)).toEqual(expected);
      expect(new Set(ids(paged.rows)).size).toBe(expected.length);
    }

    // Facts recorded before the index existed: the first page read indexes them.
    await redis.del(keys.fleetIndex(PLUGIN_ID));
    const reindexed = await walk(batches, {}, 1_000);
    expect(ids(reindexed.rows)).toEqual(ids(full));
    expect(await redis.zcard(keys.fleetIndex(PLUGIN_ID))).toBe(FLEET);

    // A page costs its rows: with 10,000 in the fleet, one page of 100 reads one slice.
    const zrange = redis.zrangebylex.bind(redis);
    let sliceRows = 0;
    redis.zrangebylex = ((...args: Parameters<typeof zrange>) =>
      zrange(...args).then((members) => ((sliceRows += members.length), members))) as typeof zrange;
    try {
      await batches.fleetPage(PLUGIN_ID, { limit: 100, after: full[5_000]!.projectId });
    } finally {
      redis.zrangebylex = zrange;
    }
    expect(sliceRows).toBe(101);

    // The api's cursor walk gives the same rows (cursor: the last project id, base64url).
    const port = await freePort();
    const api = spawnCliProcess([...globalArgs(installation), 'api', '--port', String(port)]);
    try {
      await untilLogged(api, 'api', 'listening', 30_000);
      const token = (await readFile(join(installation.dataDir, 'api-token'), 'utf8')).trim();
      const walked: string[] = [];
      let cursor: string | undefined;
      do {
        const query = new URLSearchParams({ limit: '500', where: 'go.version>=1.12' });
        if (cursor) query.set('cursor', cursor);
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/plugins/${PLUGIN_ID}/facts?${query}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(response.status).toBe(200);
        const page = (await response.json()) as { items: FleetRow[]; nextCursor?: string };
        walked.push(...ids(page.items));
        if (page.nextCursor) {
          expect(Buffer.from(page.nextCursor, 'base64url').toString('utf8')).toBe(walked.at(-1));
        }
        cursor = page.nextCursor;
      } while (cursor);
      expect(walked).toEqual(ids(await batches.fleet(PLUGIN_ID, { where: ['go.version>=1.12'] })));
    } finally {
      await terminate(api, 5_000);
    }
    suite.report.add(
      `fleet of ${FLEET}, paged by project id`,
      'every row once in the full read’s order, with and without filters; a page reads its own slice',
      `${all.pages} pages unfiltered; filters as the full read; pre-index facts indexed on first read`,
    );
  }, 300_000);
});
