// Long operations over HTTP (CLI.md: the API has a route for everything the
// CLI does): the plugin view carries the time limits and the containment in
// force, an admin sets the limits, an operation may only shorten them (400
// naming the limit), and an operation's stderr has a route.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from '../support/data-dir.js';
import {
  PLUGIN_ID,
  call,
  expectProblem,
  setUpApi,
  startWorker,
  waitFor,
  type Api,
  type ApiSetup,
  trustEnableAndScan,
} from './support.js';

interface Detail {
  fingerprint: string;
  timeLimits: { inspectMs: number; operateMs: number; healthMs: number };
  containment: { mechanism: string; detail: string; seenBy: string };
}

let setup: ApiSetup | undefined;
let api: Api;
let admin = '';
let operator = '';

beforeAll(async () => {
  setup = await setUpApi('api-long-ops', async (root) => {
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  api = setup.api;
  admin = api.adminToken;
  await trustEnableAndScan(setup);
  const token = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
    token: admin,
    body: { name: 'ops', role: 'operator' },
  });
  expect(token.status, token.text).toBe(201);
  operator = token.json.token;
});

afterAll(async () => {
  await setup?.close();
});

describe('long operations over HTTP', () => {
  it('GET /plugins/:id shows the time limits and the containment as the api sees it', async () => {
    const shown = await call<Detail>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, { token: operator });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json.timeLimits).toEqual({ inspectMs: 15_000, operateMs: 900_000, healthMs: 10_000 });
    expect(shown.json.containment).toMatchObject({
      mechanism: expect.stringMatching(/^(subreaper|process-group)$/),
      detail: expect.any(String),
      seenBy: expect.stringMatching(/^api:/),
    });
  });

  it('POST /plugins/:id/limits: admin only, checked, stored and shown', async () => {
    const denied = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/limits`, {
      token: operator,
      body: { operateMs: 60_000 },
    });
    expectProblem(denied, 403);
    expectProblem(
      await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/limits`, {
        token: admin,
        body: { operateMs: 10 },
      }),
      400,
    );
    expectProblem(
      await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/limits`, {
        token: admin,
        body: { operateTimeout: '1m' },
      }),
      400,
    );
    const set = await call<Detail>(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/limits`, {
      token: admin,
      body: { operateMs: 60_000 },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.json.timeLimits).toEqual({ inspectMs: 15_000, operateMs: 60_000, healthMs: 10_000 });
    const shown = await call<Detail>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, { token: operator });
    expect(shown.json.timeLimits.operateMs).toBe(60_000);
  });

  it('POST /operations: a longer timeoutMs is 400 naming the limit; a shorter one is kept; its logs have a route', async () => {
    const longer = await call(api, 'POST', '/api/v1/operations', {
      token: operator,
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', timeoutMs: 120_000 },
    });
    expect(expectProblem(longer, 400).detail).toMatch(/operate limit of 1m/);
    const created = await call<{ id: string; timeoutMs: number }>(api, 'POST', '/api/v1/operations', {
      token: operator,
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', timeoutMs: 30_000 },
    });
    expect(created.status, created.text).toBe(202);
    expect(created.json.timeoutMs).toBe(30_000);
    await startWorker(setup!.installation);
    const final = await waitFor('the operation to end', async () => {
      const got = await call<{ state: string }>(api, 'GET', `/api/v1/operations/${created.json.id}`, {
        token: operator,
      });
      return ['succeeded', 'failed', 'cancelled'].includes(got.json.state) ? got.json : undefined;
    });
    expect(final.state).toBe('succeeded');
    const logs = await call<unknown[]>(api, 'GET', `/api/v1/operations/${created.json.id}/logs`, {
      token: operator,
    });
    expect(logs.status, logs.text).toBe(200);
    expect(Array.isArray(logs.json)).toBe(true);
    expectProblem(await call(api, 'GET', '/api/v1/operations/op_nope/logs', { token: operator }), 404);
  });
});
