// Rollout requests over HTTP against a real api process and Redis: the
// Idempotency-Key of POST /rollouts and /retry (same key and body → the same
// rollout, 200; another body → 409 naming the header; scoped to the token;
// a refused request lets its key go), POST /operations refusing the keys
// rollouts keep for themselves, the two-person rule across a token created
// again under the creator's name, the export streamed page by page, and list
// items without their selection.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/keys.js';
import { RolloutStore } from '../../src/core/work/rollouts/rollout-store.js';
import { makeProject } from '../support/data-dir.js';
import {
  ALL_SCOPES,
  PLUGIN_ID,
  call,
  expectProblem,
  globalArgs,
  runCli,
  setUpApi,
  type Api,
  type ApiSetup,
} from './support.js';

interface Rollout {
  id: string;
  state: string;
  total: number;
  selection?: string[];
  retryOf?: string;
}

let setup: ApiSetup | undefined;
let api: Api;
let admin = '';
let redis: Redis;
let keys: ReturnType<typeof keysFor>;

beforeAll(async () => {
  setup = await setUpApi('api-rollout-requests', async (root) => {
    await makeProject(join(root, 'projects'), 'shop');
    await makeProject(join(root, 'projects'), 'blog');
  });
  api = setup.api;
  admin = api.adminToken;
  const cli = (args: string[]) => runCli([...globalArgs(setup!.installation), ...args]);
  for (const args of [
    ['plugin', 'refresh'],
    ['project', 'scan', join(setup.root, 'projects'), '--trust'],
  ]) {
    const { code, output } = await cli(args);
    expect(code, output).toBe(0);
  }
  const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, {
    token: admin,
  });
  for (const [path, body] of [
    [`/api/v1/plugins/${PLUGIN_ID}/trust`, { fingerprint: shown.json.fingerprint }],
    [`/api/v1/plugins/${PLUGIN_ID}/enable`, { scopes: ALL_SCOPES }],
  ] as const) {
    const answer = await call(api, 'POST', path, { token: admin, body });
    expect(answer.status, answer.text).toBe(200);
  }
  redis = new Redis(setup.redis.url);
  keys = keysFor(setup.installation.prefix);
}, 90_000);

afterAll(async () => {
  redis?.disconnect();
  await setup?.close();
});

async function newToken(name: string, role = 'admin'): Promise<string> {
  const answer = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
    token: admin,
    body: { name, role },
  });
  expect(answer.status, answer.text).toBe(201);
  return answer.json.token;
}

const createBody = (projects: string[], name = 'idempotent') => ({
  pluginId: PLUGIN_ID,
  action: 'fixture.echo',
  projects,
  name,
});

function postRollout(token: string, body: unknown, key?: string) {
  return call<Rollout>(api, 'POST', '/api/v1/rollouts', {
    token,
    body,
    ...(key ? { headers: { 'idempotency-key': key } } : {}),
  });
}

async function rolloutIds(token: string): Promise<string[]> {
  const answer = await call<{ items: Rollout[] }>(api, 'GET', '/api/v1/rollouts?limit=100', { token });
  return answer.json.items.map((rollout) => rollout.id);
}

describe('rollout requests', () => {
  it('POST /rollouts with an Idempotency-Key: one rollout, 200 when repeated, 409 for another body', async () => {
    const before = await rolloutIds(admin);
    const first = await postRollout(admin, createBody(['shop']), 'create-1');
    expect(first.status, first.text).toBe(201);
    const again = await postRollout(admin, createBody(['shop']), 'create-1');
    expect(again.status, again.text).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    expect(await rolloutIds(admin)).toEqual([first.json.id, ...before]);

    const other = await postRollout(admin, createBody(['blog']), 'create-1');
    const problem = expectProblem(other, 409);
    expect((problem as { code?: string }).code).toBe('IDEMPOTENCY_CONFLICT');
    expect(problem.detail).toMatch(/Idempotency-Key header "create-1" is held by rollout rollout_/);

    // Another token's same key is another key.
    const operator = await newToken('rollout-operator', 'operator');
    const theirs = await postRollout(operator, createBody(['shop']), 'create-1');
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.json.id).not.toBe(first.json.id);

    // A refused request lets its key go: the same key then makes the rollout asked for.
    const refused = await postRollout(admin, { ...createBody([]), projects: undefined }, 'create-2');
    expectProblem(refused, 400);
    const made = await postRollout(admin, createBody(['blog']), 'create-2');
    expect(made.status, made.text).toBe(201);
    expectProblem(await postRollout(admin, createBody(['blog']), 'with space'), 400);
    for (const id of [first.json.id, theirs.json.id, made.json.id])
      await call(api, 'POST', `/api/v1/rollouts/${id}/cancel`, { token: admin, body: {} });
  }, 60_000);

  it('POST /rollouts/:id/retry with an Idempotency-Key makes one retry', async () => {
    const created = await postRollout(admin, createBody(['shop', 'blog'], 'to retry'));
    expect(created.status, created.text).toBe(201);
    await call(api, 'POST', `/api/v1/rollouts/${created.json.id}/cancel`, { token: admin, body: {} });
    // As if both projects' operations had failed.
    await redis.hset(keys.rolloutStates(created.json.id), 'shop', 'failed', 'blog', 'failed');
    const retry = (key: string) =>
      call<Rollout>(api, 'POST', `/api/v1/rollouts/${created.json.id}/retry`, {
        token: admin,
        body: { failed: true },
        headers: { 'idempotency-key': key },
      });
    const first = await retry('retry-1');
    expect(first.status, first.text).toBe(201);
    expect(first.json).toMatchObject({ retryOf: created.json.id, total: 2 });
    const again = await retry('retry-1');
    expect(again.status, again.text).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    const retries = await call<{ items: Rollout[] }>(api, 'GET', '/api/v1/rollouts?limit=100', {
      token: admin,
    });
    expect(retries.json.items.filter((item) => item.retryOf === created.json.id)).toHaveLength(1);
    await call(api, 'POST', `/api/v1/rollouts/${first.json.id}/cancel`, { token: admin, body: {} });
  }, 60_000);

  it('the remote CLI sends its key again when the answer is lost: one rollout; approve refuses latest', async () => {
    // A proxy that hands the first POST /rollouts to the api, waits for its answer, then drops it.
    const posts: IncomingHttpHeaders[] = [];
    const target = new URL(api.base);
    const proxy = createServer((incoming, outgoing) => {
      const isCreate = incoming.method === 'POST' && incoming.url === '/api/v1/rollouts';
      if (isCreate) posts.push(incoming.headers);
      const forwarded = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: incoming.url,
          method: incoming.method,
          headers: incoming.headers,
        },
        (answer) => {
          if (isCreate && posts.length === 1) {
            answer.resume();
            answer.on('end', () => outgoing.socket?.destroy());
            return;
          }
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const remote = (args: string[]) => runCli(args, 60_000, { SWITCHYARD_URL: url, SWITCHYARD_TOKEN: admin });
    try {
      const before = await rolloutIds(admin);
      const created = await remote([
        '--json',
        'rollout',
        'create',
        PLUGIN_ID,
        'fixture.echo',
        'shop',
        '--name',
        'answer lost',
        '--yes',
      ]);
      expect(created.code, created.output).toBe(0);
      expect(posts).toHaveLength(2);
      expect(posts[0]!['idempotency-key']).toMatch(/^cli-/);
      expect(posts[1]!['idempotency-key']).toBe(posts[0]!['idempotency-key']);
      const after = await rolloutIds(admin);
      expect(after.length - before.length).toBe(1);

      const latest = await remote(['rollout', 'approve', 'latest', '--yes']);
      expect(latest.code, latest.output).toBe(2);
      expect(latest.output).toMatch(
        /rollout approve takes the rollout's id or a unique prefix of it, not "latest"/,
      );
      await call(api, 'POST', `/api/v1/rollouts/${after[0]!}/cancel`, { token: admin, body: {} });
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  }, 90_000);

  it("POST /operations refuses an Idempotency-Key of the rollouts' own (rollout:…)", async () => {
    const answer = await call(api, 'POST', '/api/v1/operations', {
      token: admin,
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', input: {} },
      headers: { 'idempotency-key': 'rollout:rollout_00000000-0000-0000-0000-000000000000:shop' },
    });
    const problem = expectProblem(answer, 400);
    expect(problem.detail).toMatch(/Idempotency-Key header may not start with "rollout:"/);
    const operations = await call<{ items: unknown[] }>(api, 'GET', '/api/v1/operations', { token: admin });
    expect(operations.json.items).toEqual([]);
  }, 30_000);

  it("the two-person rule: a token created again under the creator's name is the creator", async () => {
    const alice = await newToken('alice');
    const created = await postRollout(alice, createBody(['shop'], 'by alice'));
    expect(created.status, created.text).toBe(201);
    expect(created.json.state).toBe('awaiting-approval');
    const revoked = await call(api, 'DELETE', '/api/v1/tokens/alice', { token: admin });
    expect(revoked.status, revoked.text).toBe(200);
    const aliceAgain = await newToken('alice');
    const own = await call(api, 'POST', `/api/v1/rollouts/${created.json.id}/approve`, {
      token: aliceAgain,
      body: {},
    });
    expect(expectProblem(own, 403).detail).toMatch(/another admin must approve it/);
    const approved = await call<Rollout>(api, 'POST', `/api/v1/rollouts/${created.json.id}/approve`, {
      token: admin,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    await call(api, 'POST', `/api/v1/rollouts/${created.json.id}/cancel`, { token: admin, body: {} });
  }, 60_000);

  it('export is streamed page by page; list items leave out the selection', async () => {
    const projectIds = Array.from({ length: 1_200 }, (_, index) => `x${String(index).padStart(5, '0')}`);
    // Written straight into the store: the export reads the rollout's own project list only.
    const record = await new RolloutStore(redis, keys).create(
      {
        name: 'big',
        pluginId: PLUGIN_ID,
        action: 'fixture.echo',
        input: {},
        state: 'awaiting-approval',
        risk: 'low',
        createdBy: 'token:someone',
        total: projectIds.length,
        skipped: [],
        waveEnds: [projectIds.length],
        concurrency: 4,
        maxFailures: 0,
        pauseBetween: false,
        selection: ['--all'],
      },
      projectIds,
    );
    const response = await fetch(`${api.base}/api/v1/rollouts/${record.id}/export?format=csv`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    const lines = (await response.text()).trim().split('\n');
    expect(lines).toHaveLength(1_201);
    expect(lines[1]).toBe(`${record.id},x00000,1,pending,,,`);
    expect(lines[1_200]).toBe(`${record.id},x01199,1,pending,,,`);
    const unknown = await call(api, 'GET', '/api/v1/rollouts/rollout_nothing/export?format=jsonl', {
      token: admin,
    });
    expectProblem(unknown, 404);

    const listed = await call<{ items: Rollout[] }>(api, 'GET', '/api/v1/rollouts?limit=5', { token: admin });
    expect(listed.json.items.length).toBeGreaterThan(0);
    for (const item of listed.json.items) expect(item).not.toHaveProperty('selection');
    const shown = await call<Rollout>(api, 'GET', `/api/v1/rollouts/${record.id}`, { token: admin });
    expect(shown.json.selection).toEqual(['--all']);
  }, 60_000);
});
