// Lists that scale: batches, operations and audit are filtered and
// cursor-paginated in the API (`?limit=&cursor=`, `nextCursor`), every record
// served exactly once, newest first, even when many share a millisecond; the
// CLI's list filters go through the same core.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '../../src/core/access/audit.js';
import { BatchStore } from '../../src/core/work/batches/batch-store.js';
import { keysFor, type Keys } from '../../src/core/redis/keys.js';
import { OperationStore } from '../../src/core/work/operations/operation-store.js';
import { completion } from '../support/cli-process.js';
import { call, expectProblem, globalArgs, setUpApi, spawnCli, type ApiSetup } from './support.js';

let setup: ApiSetup | undefined;
let redis: Redis;
let keys: Keys;

beforeAll(async () => {
  setup = await setUpApi('api-pages');
  redis = new Redis(setup.redis.url);
  keys = keysFor(setup.installation.prefix);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await setup?.close();
});

interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** Follows nextCursor from the first page to the end; every page at most `limit` items. */
async function readAll<T>(path: string, limit: number): Promise<{ items: T[]; pages: number }> {
  const { api } = setup!;
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const url = `${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const answer = await call<Page<T>>(api, 'GET', url, { token: api.adminToken });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.items.length).toBeLessThanOrEqual(limit);
    items.push(...answer.json.items);
    cursor = answer.json.nextCursor;
    pages += 1;
    expect(pages).toBeLessThan(100);
  } while (cursor);
  return { items, pages };
}

async function cli(args: string[]): Promise<unknown> {
  const proc = spawnCli([...globalArgs(setup!.installation), '--json', ...args]);
  const { code } = await completion(proc);
  expect(code, proc.output()).toBe(0);
  return JSON.parse(proc.stdout());
}

describe('cursor pagination', () => {
  it('batches: newest first, each once across pages (ties in one ms too), filtered by state and plugin', async () => {
    const batches = new BatchStore(redis, keys);
    const created: { batchId: string; pluginId: string; state: string }[] = [];
    for (let index = 0; index < 45; index += 1) {
      const pluginId = index % 2 === 0 ? 'alpha' : 'beta';
      const batch = await batches.create(pluginId, ['p'], 'user:test');
      if (index % 3 === 0)
        await batches.record(batch.batchId, pluginId, { projectId: 'p', status: 'succeeded' });
      created.push({ batchId: batch.batchId, pluginId, state: index % 3 === 0 ? 'succeeded' : 'running' });
    }
    const all = await readAll<{ batchId: string; createdAt: string }>('/api/v1/batches', 7);
    expect(all.pages).toBe(7);
    expect(new Set(all.items.map((b) => b.batchId)).size).toBe(45);
    expect(all.items.map((b) => b.batchId).sort()).toEqual(created.map((b) => b.batchId).sort());
    const times = all.items.map((b) => Date.parse(b.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const alphaDone = await readAll<{ batchId: string }>('/api/v1/batches?state=succeeded&pluginId=alpha', 4);
    expect(alphaDone.items.map((b) => b.batchId).sort()).toEqual(
      created
        .filter((b) => b.pluginId === 'alpha' && b.state === 'succeeded')
        .map((b) => b.batchId)
        .sort(),
    );
    const listed = (await cli([
      'batch',
      'list',
      '--state',
      'succeeded',
      '--plugin',
      'alpha',
      '--limit',
      '3',
    ])) as {
      batchId: string;
      state: string;
      pluginId: string;
    }[];
    expect(listed).toHaveLength(3);
    expect(listed.every((b) => b.state === 'succeeded' && b.pluginId === 'alpha')).toBe(true);

    const { api } = setup!;
    expectProblem(
      await call(api, 'GET', '/api/v1/batches?cursor=not-a-cursor', { token: api.adminToken }),
      400,
    );
    expectProblem(await call(api, 'GET', '/api/v1/batches?limit=501', { token: api.adminToken }), 400);
    expectProblem(await call(api, 'GET', '/api/v1/batches?state=finished', { token: api.adminToken }), 400);
  });

  it('operations: each once across pages, filtered by project, plugin and state', async () => {
    const operations = new OperationStore(redis, keys);
    const made: { id: string; projectId: string; pluginId: string }[] = [];
    for (let index = 0; index < 35; index += 1) {
      const projectId = ['a', 'b', 'c'][index % 3]!;
      const pluginId = index % 2 === 0 ? 'alpha' : 'beta';
      const { operation } = await operations.create({
        pluginId,
        projectId,
        action: 'x',
        input: null,
        requestedBy: 'user:test',
      });
      made.push({ id: operation.id, projectId, pluginId });
    }
    const all = await readAll<{ id: string }>('/api/v1/operations', 6);
    expect(all.items.map((o) => o.id).sort()).toEqual(made.map((o) => o.id).sort());
    const some = await readAll<{ id: string }>(
      '/api/v1/operations?projectId=b&pluginId=beta&state=queued',
      2,
    );
    expect(some.items.map((o) => o.id).sort()).toEqual(
      made
        .filter((o) => o.projectId === 'b' && o.pluginId === 'beta')
        .map((o) => o.id)
        .sort(),
    );
    const none = await readAll<{ id: string }>('/api/v1/operations?state=succeeded', 5);
    expect(none.items).toEqual([]);
    const listed = (await cli([
      'op',
      'list',
      '--project',
      'a',
      '--plugin',
      'alpha',
      '--state',
      'queued',
    ])) as {
      projectId: string;
      pluginId: string;
    }[];
    expect(listed.length).toBe(made.filter((o) => o.projectId === 'a' && o.pluginId === 'alpha').length);
  });

  it('audit: pages, actor / action prefix / target / since filters, health checks left out on request', async () => {
    for (let index = 0; index < 30; index += 1) {
      await appendAudit(redis, keys, {
        actor: index % 2 === 0 ? 'alice' : 'scheduler',
        action: index % 2 === 0 ? 'plugin.trust' : 'scheduler.health-checks',
        target: index % 2 === 0 ? `plugin-${index % 4}` : '*',
        detail: { index },
      });
    }
    type Entry = { id: string; actor: string; action: string; target: string; detail: { index?: number } };
    const all = await readAll<Entry>('/api/v1/audit', 8);
    expect(new Set(all.items.map((e) => e.id)).size).toBe(all.items.length);
    expect(all.items.filter((e) => e.detail.index !== undefined)).toHaveLength(30);
    const noHealth = await readAll<Entry>('/api/v1/audit?excludeAction=scheduler.health-checks', 5);
    expect(noHealth.items.some((e) => e.action === 'scheduler.health-checks')).toBe(false);
    expect(noHealth.items.filter((e) => e.detail.index !== undefined)).toHaveLength(15);
    const alice = await readAll<Entry>(
      '/api/v1/audit?actor=alice&action=plugin.&target=plugin-2&since=1h',
      3,
    );
    expect(alice.items.map((e) => e.detail.index)).toEqual([26, 22, 18, 14, 10, 6, 2]);
    // A name is matched whole up to a dot: `schedule` is not `scheduler.*`, `plugin` is `plugin.*`.
    await appendAudit(redis, keys, { actor: 'alice', action: 'schedule.add', target: 's1', detail: {} });
    const schedule = await readAll<Entry>('/api/v1/audit?action=schedule', 10);
    expect(schedule.items.map((e) => e.action)).toEqual(['schedule.add']);
    const plugin = await readAll<Entry>('/api/v1/audit?action=plugin', 10);
    expect(new Set(plugin.items.map((e) => e.action))).toEqual(new Set(['plugin.trust']));
    expect((await readAll<Entry>('/api/v1/audit?action=plug', 10)).items).toEqual([]);
    const recent = await readAll<Entry>('/api/v1/audit?since=1', 10);
    expect(recent.items.filter((e) => e.detail.index !== undefined)).toEqual([]);
    const { api } = setup!;
    expectProblem(await call(api, 'GET', '/api/v1/audit?since=soon', { token: api.adminToken }), 400);
    const listed = (await cli([
      'audit',
      '--actor',
      'alice',
      '--action',
      'plugin.',
      '--since',
      '1h',
      '--limit',
      '4',
    ])) as Entry[];
    expect(listed.map((e) => e.detail.index)).toEqual([28, 26, 24, 22]);
  });

  it('operations by requester, audit until a time: both pages, each once', async () => {
    const operations = new OperationStore(redis, keys);
    const mine: string[] = [];
    for (let index = 0; index < 9; index += 1) {
      const { operation } = await operations.create({
        pluginId: 'alpha',
        projectId: 'a',
        action: 'x',
        input: {},
        requestedBy: index % 3 === 0 ? 'token:ci' : 'user:someone@host',
      });
      if (index % 3 === 0) mine.unshift(operation.id);
    }
    const byCi = await readAll<{ id: string; requestedBy: string }>(
      '/api/v1/operations?requestedBy=token:ci',
      2,
    );
    expect(byCi.items.map((o) => o.id)).toEqual(mine);
    expect(byCi.items.every((o) => o.requestedBy === 'token:ci')).toBe(true);

    type Entry = { actor: string; detail: { step?: number } };
    for (let step = 0; step < 4; step += 1)
      await appendAudit(redis, keys, {
        actor: 'until-test',
        action: 'plugin.trust',
        target: 'x',
        detail: { step },
      });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const cut = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let step = 4; step < 6; step += 1)
      await appendAudit(redis, keys, {
        actor: 'until-test',
        action: 'plugin.trust',
        target: 'x',
        detail: { step },
      });
    const before = await readAll<Entry>(`/api/v1/audit?actor=until-test&until=${encodeURIComponent(cut)}`, 3);
    expect(before.items.map((e) => e.detail.step)).toEqual([3, 2, 1, 0]);
    const aWhileAgo = await readAll<Entry>('/api/v1/audit?actor=until-test&until=1h', 3);
    expect(aWhileAgo.items).toEqual([]);
    const { api } = setup!;
    expectProblem(await call(api, 'GET', '/api/v1/audit?until=later', { token: api.adminToken }), 400);
  });
});
