// API hygiene against a real `switchyard api` process: a deeply nested body is
// a 400, a 500 is logged under a request id that its problem body carries, and
// with the test's own redis-server stopped every route answers 503 within 2 s
// (and /healthz too), recovering once Redis is back. Batch events follow the
// batch over pub/sub, not by polling the record.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/keys.js';
import { BatchStore } from '../../src/core/work/batches/batch-store.js';
import { call, expectProblem, readEvents, setUpApi, waitFor, type ApiSetup } from './support.js';

let setup: ApiSetup | undefined;
let redis: Redis;

beforeAll(async () => {
  // Redis is killed and restarted below: every acknowledged write on disk first.
  setup = await setUpApi('api-hygiene', undefined, { appendfsync: 'always' });
  redis = new Redis(setup.redis.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await setup?.close();
});

/** An operation request whose input (one JSON object, as the contract requires) nests arrays `depth` deep. */
function nested(depth: number): string {
  return `{"pluginId":"p","projectId":"q","action":"a","input":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
}

describe('request bodies', () => {
  it('a JSON body nested 3,000 levels deep is a 400 problem, not a 500', async () => {
    const { api } = setup!;
    const answer = await call(api, 'POST', '/api/v1/operations', {
      token: api.adminToken,
      rawBody: nested(3_000),
    });
    const problem = expectProblem(answer, 400);
    expect(problem.detail).toMatch(/nests deeper than \d+ levels/);
    // Moderate nesting is still accepted as far as the body goes (the plugin is unknown: 4xx, not 400).
    const shallow = await call(api, 'POST', '/api/v1/operations', {
      token: api.adminToken,
      rawBody: nested(10),
    });
    expect(shallow.status).not.toBe(400);
    expect(shallow.status).toBeLessThan(500);
  });
});

describe('internal errors', () => {
  it('a 500 carries a request id, and the api log holds the redacted error under that id', async () => {
    const { api, installation } = setup!;
    // A corrupt token record: listing tokens fails in JSON.parse, a genuine bug-class error.
    const key = `${keysFor(installation.prefix).prefix}:tokens`;
    await redis.hset(key, 'corrupt00000', '{not json, password=hunter2-in-a-record');
    try {
      const answer = await call<{ requestId?: string; detail: string }>(api, 'GET', '/api/v1/tokens', {
        token: api.adminToken,
      });
      expectProblem(answer, 500);
      const requestId = answer.json.requestId;
      expect(requestId).toMatch(/^req_[0-9a-f-]{36}$/);
      expect(answer.json.detail).toContain(requestId);
      expect(answer.headers.get('x-request-id')).toBe(requestId);
      const logged = await waitFor('the api to log the 500', async () =>
        api.proc
          .output()
          .split('\n')
          .find((line) => line.includes(requestId!) && line.includes('internal-error')),
      );
      expect(JSON.parse(logged)).toMatchObject({
        level: 50,
        requestId,
        method: 'GET',
        url: '/api/v1/tokens',
      });
      expect(logged).toContain('SyntaxError');
      expect(logged).not.toContain('hunter2');
    } finally {
      await redis.hdel(key, 'corrupt00000');
    }
  });
});

describe('batch events', () => {
  it('follow the batch over pub/sub: no polling of the record, each outcome arrives as it is recorded', async () => {
    const { api, installation } = setup!;
    const keys = keysFor(installation.prefix);
    const batches = new BatchStore(redis, keys);
    const batch = await batches.create('fixture-inspector', ['p1', 'p2'], 'user:test');
    const hgetallCalls = async () => {
      const stats = await redis.info('commandstats');
      return Number(/cmdstat_hgetall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    const events: string[] = [];
    const reading = readEvents(
      api,
      `/api/v1/batches/${batch.batchId}/events`,
      api.adminToken,
      20_000,
      (event) => {
        events.push(event.event);
        return event.event === 'done';
      },
    );
    await waitFor('the first progress event', async () => events.length > 0);
    const before = await hgetallCalls();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // Polling every 300 ms would read the batch hash about 6 times here.
    expect((await hgetallCalls()) - before).toBeLessThanOrEqual(1);

    const started = Date.now();
    await batches.record(batch.batchId, 'fixture-inspector', { projectId: 'p1', status: 'succeeded' });
    await waitFor('the progress event of p1', async () => events.length >= 2, 5_000, 10);
    const latency = Date.now() - started;
    expect(latency).toBeLessThan(1_000);
    await batches.record(batch.batchId, 'fixture-inspector', { projectId: 'p2', status: 'failed' });
    const stream = await reading;
    // Each recorded project's outcome also comes as an `outcomes` event (the web UI's live rows).
    expect(stream.events.map((event) => event.event).filter((name) => name !== 'outcomes')).toEqual([
      'progress',
      'progress',
      'progress',
      'done',
    ]);
    const progress = stream.events.filter((event) => event.event !== 'outcomes');
    expect(progress[1]!.data).toMatchObject({ succeeded: 1, failed: 0, pending: 1, state: 'running' });
    expect(progress[2]!.data).toMatchObject({ succeeded: 1, failed: 1, pending: 0, state: 'failed' });
    // `done` carries the counts; each outcome came as an `outcomes` event.
    expect(progress[3]!.data).toMatchObject({ state: 'failed', succeeded: 1, failed: 1 });
    expect(progress[3]!.data).not.toHaveProperty('results');
    const outcomes = stream.events
      .filter((event) => event.event === 'outcomes')
      .flatMap((event) => event.data);
    expect(outcomes.map((outcome) => (outcome as { projectId: string }).projectId)).toEqual(['p1', 'p2']);
  }, 30_000);
});

/** Every /api/v1 route, with a body where it takes one. */
const ROUTES: [string, string, unknown?][] = [
  ['GET', '/api/v1/plugins'],
  ['GET', '/api/v1/plugins/fixture-inspector'],
  ['POST', '/api/v1/plugins/refresh', {}],
  ['POST', '/api/v1/plugins/fixture-inspector/trust', { fingerprint: 'a'.repeat(64) }],
  ['POST', '/api/v1/plugins/fixture-inspector/enable', { scopes: ['project.metadata.read'] }],
  ['POST', '/api/v1/plugins/fixture-inspector/disable', {}],
  ['POST', '/api/v1/plugins/fixture-inspector/health', {}],
  ['GET', '/api/v1/plugins/fixture-inspector/logs'],
  ['GET', '/api/v1/plugins/fixture-inspector/facts'],
  ['GET', '/api/v1/plugins/fixture-inspector/facts/counts?fact=x'],
  ['GET', '/api/v1/plugins/fixture-inspector/trend'],
  ['POST', '/api/v1/plugins/fixture-inspector/limits', { operateMs: 60_000 }],
  ['GET', '/api/v1/projects'],
  ['POST', '/api/v1/projects', { path: '/tmp' }],
  ['POST', '/api/v1/projects/scan', { dir: '/tmp' }],
  ['POST', '/api/v1/projects/p/trust', {}],
  ['POST', '/api/v1/projects/p/untrust', {}],
  ['DELETE', '/api/v1/projects/p'],
  ['POST', '/api/v1/projects/p/labels', { labels: ['go'] }],
  ['DELETE', '/api/v1/projects/p/labels/go'],
  ['GET', '/api/v1/projects/p/history?plugin=fixture-inspector'],
  ['GET', '/api/v1/projects/p/actions?plugin=fixture-inspector'],
  ['POST', '/api/v1/batches', { pluginId: 'fixture-inspector', projects: 'all' }],
  ['GET', '/api/v1/batches'],
  ['GET', '/api/v1/batches/b'],
  ['GET', '/api/v1/batches/b/events'],
  ['GET', '/api/v1/batches/b/results?status=failed&offset=0&limit=100'],
  ['POST', '/api/v1/batches/b/cancel', {}],
  ['POST', '/api/v1/batches/cancel', { state: 'running' }],
  ['POST', '/api/v1/batches/b/retry', {}],
  ['GET', '/api/v1/batches/b/previous'],
  ['GET', '/api/v1/batches/resolve?ref=latest'],
  ['GET', '/api/v1/batches/b/diff?from=a'],
  ['GET', '/api/v1/batches/b/export?format=csv'],
  ['POST', '/api/v1/operations', { pluginId: 'fixture-inspector', projectId: 'p', action: 'a' }],
  ['GET', '/api/v1/operations'],
  ['GET', '/api/v1/operations/o'],
  ['GET', '/api/v1/operations/o/logs'],
  ['GET', '/api/v1/operations/resolve?ref=latest'],
  ['POST', '/api/v1/operations/o/cancel', {}],
  ['GET', '/api/v1/operations/o/events'],
  ['POST', '/api/v1/rollouts', { pluginId: 'fixture-inspector', action: 'a', all: true }],
  ['GET', '/api/v1/rollouts'],
  ['GET', '/api/v1/rollouts/resolve?ref=latest'],
  ['GET', '/api/v1/rollouts/r'],
  ['GET', '/api/v1/rollouts/r/projects'],
  ['POST', '/api/v1/rollouts/r/approve', {}],
  ['POST', '/api/v1/rollouts/r/pause', {}],
  ['POST', '/api/v1/rollouts/r/resume', {}],
  ['POST', '/api/v1/rollouts/r/cancel', {}],
  ['POST', '/api/v1/rollouts/r/retry', { failed: true }],
  ['GET', '/api/v1/rollouts/r/export?format=csv'],
  ['GET', '/api/v1/schedules'],
  ['POST', '/api/v1/schedules', { pluginId: 'fixture-inspector', projects: 'all', cron: '0 3 * * *' }],
  ['POST', '/api/v1/schedules/s', { name: 'nightly' }],
  ['POST', '/api/v1/schedules/s/pause', {}],
  ['POST', '/api/v1/schedules/s/resume', {}],
  ['DELETE', '/api/v1/schedules/s'],
  ['GET', '/api/v1/audit'],
  ['GET', '/api/v1/queue'],
  ['GET', '/api/v1/teams'],
  ['POST', '/api/v1/teams/t', { weight: 2 }],
  ['GET', '/api/v1/tokens'],
  ['POST', '/api/v1/tokens', { name: 'x', role: 'viewer' }],
  ['DELETE', '/api/v1/tokens/t'],
  ['GET', '/api/v1/me'],
  ['GET', '/api/v1/webhooks'],
  ['POST', '/api/v1/webhooks', { url: 'https://example.test/hook', events: ['batch.finished'], secret: 's' }],
  ['DELETE', '/api/v1/webhooks/w'],
  ['POST', '/api/v1/webhooks/w', { active: false }],
  ['POST', '/api/v1/webhooks/w/secret', { secret: 'new-secret' }],
  ['POST', '/api/v1/webhooks/w/ping', {}],
  ['GET', '/api/v1/webhooks/deliveries'],
  ['GET', '/api/v1/webhooks/deliveries/d'],
  ['POST', '/api/v1/webhooks/deliveries/d/redeliver', {}],
  ['GET', '/api/v1/webhooks/w/deliveries'],
  ['GET', '/api/v1/openapi.json'],
];

describe('Redis unreachable', () => {
  it('every /api/v1 route and /healthz answer 503 within 2 s, and the api recovers when Redis is back', async () => {
    const { api } = setup!;
    const surface = await call<{ paths: Record<string, Record<string, unknown>> }>(
      api,
      'GET',
      '/api/v1/openapi.json',
      {
        token: api.adminToken,
      },
    );
    const documented = Object.entries(surface.json.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented).toHaveLength(ROUTES.length);

    const logBefore = api.proc.output().length;
    await setup!.redis.kill();
    const slow: string[] = [];
    for (const [method, path, body] of [...ROUTES, ['GET', '/healthz'] as [string, string]]) {
      const started = Date.now();
      const answer = await call(api, method, path, {
        token: api.adminToken,
        ...(body === undefined ? {} : { body }),
      });
      const elapsed = Date.now() - started;
      if (answer.status !== 503 || elapsed >= 2_000)
        slow.push(`${method} ${path}: ${answer.status} in ${elapsed} ms`);
      if (path !== '/healthz') expectProblem(answer, 503);
    }
    expect(slow).toEqual([]);
    expect(api.proc.running()).toBe(true);
    // Said in one log line, not a stack per reconnect attempt.
    expect(api.proc.output().slice(logBefore)).not.toMatch(/^\s+at /m);

    await setup!.redis.restart();
    await waitFor(
      'the api to answer again',
      async () => {
        const answer = await call(api, 'GET', '/api/v1/plugins', { token: api.adminToken });
        return answer.status === 200;
      },
      15_000,
      200,
    );
  }, 60_000);
});
