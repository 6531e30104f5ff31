// No one request holds the api, and no reader makes it hold a batch whole
// (HTTP-API.md "Limits"), against real api processes over HTTP and a Redis
// the test owns: a viewer's catastrophic regular expression over a fact that
// project content set answers at once while /healthz stays fast; a token past
// its rate limit gets 429 with Retry-After while another token and /healthz
// do not; a request that outlasts its time budget gets 503 REQUEST_TOO_SLOW;
// a results page stops at 4 MiB of results, and a batch's event stream ends
// without the batch's results.
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/keys.js';
import { BatchStore, type ProjectOutcome } from '../../src/core/work/batches/batch-store.js';
import { makeProject } from '../support/data-dir.js';
import {
  PLUGIN_ID,
  call,
  expectProblem,
  readEvents,
  setUpApi,
  startApi,
  trustEnableAndScan,
  type Api,
  type ApiSetup,
} from './support.js';

let setup: ApiSetup | undefined;
let redis: Redis | undefined;
let store: BatchStore;
let admin = '';

beforeAll(async () => {
  setup = await setUpApi('api-request-defenses', async (root) => {
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  redis = new Redis(setup.redis.url, { maxRetriesPerRequest: 1 });
  store = new BatchStore(redis, keysFor(setup.installation.prefix));
  admin = setup.api.adminToken;
  await trustEnableAndScan(setup);
}, 60_000);

afterAll(async () => {
  await redis?.quit();
  await setup?.close();
});

async function token(api: Api, name: string, role = 'viewer'): Promise<string> {
  const made = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
    token: admin,
    body: { name, role },
  });
  expect(made.status, made.text).toBe(201);
  return made.json.token;
}

function outcome(projectId: string, facts: Record<string, string>, summary = 'ok'): ProjectOutcome {
  return {
    projectId,
    status: 'succeeded',
    result: {
      summary,
      facts: Object.entries(facts).map(([id, value]) => ({ id, label: id, value, source: 'package.json' })),
      actions: [],
      warnings: [],
      observedAt: new Date().toISOString(),
    },
  } as ProjectOutcome;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

describe('fact filters', () => {
  it('match in linear time: 20 catastrophic patterns answer at once, and /healthz meanwhile', async () => {
    const api = setup!.api;
    // A version anyone with a commit can set, reported as a fact; a backtracking engine takes seconds on it.
    const batch = await store.create(PLUGIN_ID, ['shop'], 'test');
    await store.recordAll(batch.batchId, PLUGIN_ID, [
      outcome('shop', { 'pkg.version': `${'a'.repeat(27)}!` }),
    ]);
    const viewer = await token(api, 'regex-viewer');
    const hostile = `/api/v1/plugins/${PLUGIN_ID}/facts?where=${encodeURIComponent('pkg.version~^(a+)+$')}`;

    const probes: number[] = [];
    let running = true;
    const probing = (async () => {
      while (running) probes.push((await timed(() => call(api, 'GET', '/healthz'))).ms);
    })();
    const answers = await timed(() =>
      Promise.all(
        Array.from({ length: 20 }, () => call<{ items: unknown[] }>(api, 'GET', hostile, { token: viewer })),
      ),
    );
    running = false;
    await probing;
    for (const answer of answers.value) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.items).toEqual([]);
    }
    expect(answers.ms, 'all 20 hostile filters').toBeLessThan(3_000);
    expect(
      Math.max(...probes),
      `/healthz while they ran: ${probes.map(Math.round).join(', ')} ms`,
    ).toBeLessThan(1_000);
    // The pattern still means what it says.
    const matching = await call<{ items: { projectId: string }[] }>(
      api,
      'GET',
      `/api/v1/plugins/${PLUGIN_ID}/facts?where=${encodeURIComponent('pkg.version~^a+!$')}`,
      { token: viewer },
    );
    expect(matching.json.items.map((row) => row.projectId)).toEqual(['shop']);
  }, 120_000);

  it('refuses a pattern longer than 256 characters, or one outside RE2 syntax, naming why', async () => {
    const api = setup!.api;
    const facts = (where: string) =>
      call(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}/facts?where=${encodeURIComponent(where)}`, {
        token: admin,
      });
    expect(expectProblem(await facts(`pkg.version~${'a'.repeat(257)}`), 400).detail).toMatch(/at most 256/);
    expect((await facts(`pkg.version~${'a'.repeat(256)}`)).status).toBe(200);
    expect(expectProblem(await facts('pkg.version~(?=a)a'), 400).detail).toMatch(/RE2/);
  });
});

describe('request rates and time', () => {
  let limited: Api | undefined;
  beforeAll(async () => {
    limited = await startApi(setup!.installation, [], {
      SWITCHYARD_API_RATE_LIMIT: '5',
      SWITCHYARD_API_REQUEST_BUDGET_MS: '300',
    });
  }, 30_000);

  it('answers a token past its rate 429 with Retry-After; other tokens and /healthz go on', async () => {
    const api = limited!;
    const flooding = await token(setup!.api, 'flooding-viewer');
    const other = await token(setup!.api, 'other-viewer');
    for (let i = 0; i < 5; i++)
      expect((await call(api, 'GET', '/api/v1/batches', { token: flooding })).status).toBe(200);
    const refused = await call(api, 'GET', '/api/v1/batches', { token: flooding });
    const problem = expectProblem(refused, 429);
    expect(problem.detail).toMatch(/more than 5 requests/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((refused.json as { code: string }).code).toBe('TOO_MANY_REQUESTS');
    expect((await call(api, 'GET', '/api/v1/batches', { token: other })).status).toBe(200);
    // /healthz answers its own state (503 `starting` here: no worker runs), never 429.
    for (let i = 0; i < 10; i++) {
      const health = await call<{ api: boolean }>(api, 'GET', '/healthz');
      expect(health.status).not.toBe(429);
      expect(health.json.api).toBe(true);
    }
  });

  it('answers a request that outlasts its time budget 503 REQUEST_TOO_SLOW', async () => {
    const api = limited!;
    const viewer = await token(setup!.api, 'patient-viewer');
    // Redis answers nobody for 2 s: the request's token check waits on it.
    const pauser = new Redis(setup!.redis.url);
    await pauser.call('CLIENT', 'PAUSE', '2000', 'ALL');
    try {
      const { ms, value } = await timed(() => call(api, 'GET', '/api/v1/batches', { token: viewer }));
      const problem = expectProblem(value, 503);
      expect((value.json as { code: string }).code).toBe('REQUEST_TOO_SLOW');
      expect(problem.detail).toMatch(/300 ms/);
      expect(ms).toBeLessThan(1_500);
    } finally {
      await pauser.call('CLIENT', 'UNPAUSE').catch(() => {});
      pauser.disconnect();
    }
  });
});

describe('large results', () => {
  const MiB = 1024 * 1024;
  let batchId = '';
  beforeAll(async () => {
    const ids = Array.from({ length: 12 }, (_, index) => `big-${String(index).padStart(2, '0')}`);
    batchId = (await store.create(PLUGIN_ID, ids, 'test')).batchId;
    for (const id of ids) await store.recordAll(batchId, PLUGIN_ID, [outcome(id, {}, 'x'.repeat(MiB))]);
  }, 60_000);

  it('a results page stops at 4 MiB of results, and the pages after it hold the rest', async () => {
    const api = setup!.api;
    const seen: string[] = [];
    let offset = 0;
    for (let pages = 0; pages < 12 && offset < 12; pages++) {
      const page = await call<{ items: { projectId: string }[]; total: number; offset: number }>(
        api,
        'GET',
        `/api/v1/batches/${batchId}/results?offset=${offset}&limit=100`,
        { token: admin },
      );
      expect(page.status, page.text.slice(0, 300)).toBe(200);
      expect(page.json.total).toBe(12);
      expect(page.text.length).toBeLessThan(5.5 * MiB);
      expect(page.json.items.length).toBeGreaterThan(0);
      expect(page.json.items.length).toBeLessThan(12);
      seen.push(...page.json.items.map((item) => item.projectId));
      offset += page.json.items.length;
    }
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(12);
  }, 60_000);

  it("a finished batch's event stream ends without the batch's results; GET /batches/:id has them", async () => {
    const api = setup!.api;
    const followed = await readEvents(api, `/api/v1/batches/${batchId}/events`, admin, 30_000);
    const done = followed.events.find((event) => event.event === 'done');
    expect(done?.data).toMatchObject({ batchId, state: 'succeeded', succeeded: 12 });
    expect(JSON.stringify(followed.events).length).toBeLessThan(64 * 1024);
    const whole = await call<{
      batchId: string;
      results: { projectId: string; result: { summary: string } }[];
    }>(api, 'GET', `/api/v1/batches/${batchId}`, { token: admin });
    expect(whole.status).toBe(200);
    expect(whole.json.results.map((row) => row.projectId)).toEqual(
      Array.from({ length: 12 }, (_, index) => `big-${String(index).padStart(2, '0')}`),
    );
    expect(whole.json.results[0]!.result.summary.length).toBe(MiB);
  }, 60_000);
});
