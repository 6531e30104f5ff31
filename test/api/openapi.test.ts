// The OpenAPI document documents responses: every route of a real api process
// is called (with real plugin work done by a real worker), and each answer —
// successes and problem documents alike — is validated with ajv against the
// schema the served /api/v1/openapi.json gives for that route and status.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_SCOPES,
  PLUGIN_ID,
  call,
  readEvents,
  setUpApi,
  startWorker,
  waitFor,
  type Answer,
  type Api,
  type ApiSetup,
} from './support.js';

interface Doc {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
}

let setup: ApiSetup | undefined;
let api: Api;
let root = '';
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
/** "get /api/v1/plugins/{id}" → statuses seen. */
const covered = new Map<string, Set<number>>();

beforeAll(async () => {
  setup = await setUpApi('api-openapi', async (base) => {
    await mkdir(join(base, 'projects', 'shop'), { recursive: true });
    await mkdir(join(base, 'projects', 'blog'), { recursive: true });
  });
  ({ api, root } = setup);
  await startWorker(setup.installation);
  doc = (await call<Doc>(api, 'GET', '/api/v1/openapi.json', { token: api.adminToken })).json;
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

/** Calls a route and validates the answer against the document; `template` is the OpenAPI path. */
async function checked<T = unknown>(
  method: string,
  template: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const answer = await call<T>(api, method, path, { token: api.adminToken, ...options });
  validate(method, template, answer);
  return answer;
}

function apiLogAbout(answer: Answer<unknown>): string {
  const requestId = (answer.json as { requestId?: string } | undefined)?.requestId;
  const lines = api.proc.output().split('\n');
  return (requestId ? lines.filter((line) => line.includes(requestId)) : lines.slice(-20)).join('\n');
}

function validate(method: string, template: string, answer: Answer<unknown>): void {
  const operation = doc.paths[template]?.[method.toLowerCase()];
  expect(operation, `${method} ${template} is documented`).toBeDefined();
  const response = operation!.responses[String(answer.status)];
  // An internal error is never documented: show what the api logged under its request id.
  const logged = answer.status >= 500 ? `\napi log:\n${apiLogAbout(answer)}` : '';
  expect(
    response,
    `${method} ${template} documents status ${answer.status}: ${answer.text}${logged}`,
  ).toBeDefined();
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!;
  const schema = response!.content?.[type]?.schema;
  expect(schema, `${method} ${template} ${answer.status} documents ${type}`).toBeDefined();
  const validateBody = ajv.compile(schema!);
  const ok = validateBody(answer.json);
  expect(
    ok,
    `${method} ${template} ${answer.status}: ${ajv.errorsText(validateBody.errors)}\n${answer.text.slice(0, 600)}`,
  ).toBe(true);
  const key = `${method.toLowerCase()} ${template}`;
  covered.set(key, (covered.get(key) ?? new Set()).add(answer.status));
}

/** A streamed (non-JSON) answer: its status and media type are the documented ones. */
async function streamed(template: string, path: string): Promise<void> {
  const answer = await call(api, 'GET', path, { token: api.adminToken });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.text.length).toBeGreaterThan(0);
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!;
  const content = doc.paths[template]?.get?.responses['200']?.content;
  expect(content?.[type], `GET ${template} documents ${type}`).toBeDefined();
  const key = `get ${template}`;
  covered.set(key, (covered.get(key) ?? new Set()).add(answer.status));
}

describe('every route answers what /api/v1/openapi.json says', () => {
  it('plugins, projects, batches, operations, schedules, audit, tokens, me, and their problem documents', async () => {
    const P = '/api/v1';
    await checked('GET', `${P}/openapi.json`, `${P}/openapi.json`);
    await checked('POST', `${P}/plugins/refresh`, `${P}/plugins/refresh`);
    await checked('GET', `${P}/plugins`, `${P}/plugins`);
    const shown = await checked<{ fingerprint: string }>(
      'GET',
      `${P}/plugins/{id}`,
      `${P}/plugins/${PLUGIN_ID}`,
    );
    await checked('GET', `${P}/plugins/{id}`, `${P}/plugins/nope`); // 404 problem
    await checked('POST', `${P}/plugins/{id}/trust`, `${P}/plugins/${PLUGIN_ID}/trust`, {
      body: { fingerprint: 'x' },
    }); // 400 problem with errors[]
    await checked('POST', `${P}/plugins/{id}/trust`, `${P}/plugins/${PLUGIN_ID}/trust`, {
      body: { fingerprint: shown.json.fingerprint },
    });
    await checked('POST', `${P}/plugins/{id}/enable`, `${P}/plugins/${PLUGIN_ID}/enable`, {
      body: { scopes: ALL_SCOPES },
    });
    await checked('POST', `${P}/plugins/{id}/health`, `${P}/plugins/${PLUGIN_ID}/health`);
    await checked('POST', `${P}/plugins/{id}/limits`, `${P}/plugins/${PLUGIN_ID}/limits`, {
      body: { operateMs: 60_000 },
    });
    await checked('GET', `${P}/plugins/{id}/logs`, `${P}/plugins/${PLUGIN_ID}/logs`);

    await checked('POST', `${P}/projects`, `${P}/projects`, {
      body: { path: join(root, 'projects', 'shop'), trust: true },
    });
    await checked('POST', `${P}/projects/scan`, `${P}/projects/scan`, {
      body: { dir: join(root, 'projects'), trust: true },
    });
    await checked('GET', `${P}/projects`, `${P}/projects`);
    await checked('POST', `${P}/projects/{id}/untrust`, `${P}/projects/blog/untrust`);
    await checked('POST', `${P}/projects/{id}/trust`, `${P}/projects/blog/trust`);
    await checked('POST', `${P}/projects/{id}/labels`, `${P}/projects/blog/labels`, {
      body: { labels: ['web'] },
    });
    await checked('DELETE', `${P}/projects/{id}/labels/{label}`, `${P}/projects/blog/labels/web`);

    const batch = await checked<{ batchId: string }>('POST', `${P}/batches`, `${P}/batches`, {
      body: { pluginId: PLUGIN_ID, projects: ['shop', 'blog'] },
    });
    const events = await readEvents(api, `${P}/batches/${batch.json.batchId}/events`, api.adminToken, 30_000);
    expect(events.events.map((event) => event.event)).toContain('done');
    covered.set(`get ${P}/batches/{id}/events`, new Set([events.status]));
    await checked('GET', `${P}/batches/{id}`, `${P}/batches/${batch.json.batchId}`);
    const results = await checked<{ items: { projectId: string }[]; total: number }>(
      'GET',
      `${P}/batches/{id}/results`,
      `${P}/batches/${batch.json.batchId}/results?status=succeeded&offset=1&limit=1`,
    );
    expect(results.json).toMatchObject({ total: 2, items: [{ projectId: 'shop' }] });
    await checked('GET', `${P}/batches/{id}/results`, `${P}/batches/${batch.json.batchId}/results?status=x`); // 400 problem
    await checked('GET', `${P}/batches`, `${P}/batches`);
    await checked('GET', `${P}/batches`, `${P}/batches?state=succeeded&pluginId=${PLUGIN_ID}&limit=1`);
    // Batch control: previous (none yet), retry, diff, cancel (idempotent on a finished batch), export.
    await checked('GET', `${P}/batches/{id}/previous`, `${P}/batches/${batch.json.batchId}/previous`);
    const retry = await checked<{ batchId: string }>(
      'POST',
      `${P}/batches/{id}/retry`,
      `${P}/batches/${batch.json.batchId}/retry`,
      { body: {} },
    );
    await readEvents(api, `${P}/batches/${retry.json.batchId}/events`, api.adminToken, 30_000);
    await checked('GET', `${P}/batches/{id}/previous`, `${P}/batches/${retry.json.batchId}/previous`);
    await checked('GET', `${P}/batches/resolve`, `${P}/batches/resolve?ref=latest&pluginId=${PLUGIN_ID}`);
    await checked('GET', `${P}/batches/resolve`, `${P}/batches/resolve?ref=zz`); // 400 problem
    await checked(
      'GET',
      `${P}/batches/{id}/diff`,
      `${P}/batches/${retry.json.batchId}/diff?from=${batch.json.batchId}`,
    );
    await checked('GET', `${P}/batches/{id}/diff`, `${P}/batches/${retry.json.batchId}/diff`); // 400 problem
    const fleet = await checked<{ items: { projectId: string }[] }>(
      'GET',
      `${P}/plugins/{id}/facts`,
      `${P}/plugins/${PLUGIN_ID}/facts?limit=1`,
    );
    expect(fleet.json.items).toHaveLength(1);
    await checked(
      'GET',
      `${P}/plugins/{id}/facts`,
      `${P}/plugins/${PLUGIN_ID}/facts?sort=x&order=desc&limit=1`,
    );
    await checked('GET', `${P}/plugins/{id}/facts`, `${P}/plugins/${PLUGIN_ID}/facts?where=x~(`); // 400 problem
    await checked('GET', `${P}/plugins/{id}/facts/counts`, `${P}/plugins/${PLUGIN_ID}/facts/counts?fact=x`);
    const trend = await checked<{ batchId: string; succeeded: number }[]>(
      'GET',
      `${P}/plugins/{id}/trend`,
      `${P}/plugins/${PLUGIN_ID}/trend?batches=5&fact=x`,
    );
    expect(trend.json.map((point) => point.batchId)).toEqual([batch.json.batchId, retry.json.batchId]);
    await checked('GET', `${P}/plugins/{id}/trend`, `${P}/plugins/${PLUGIN_ID}/trend?batches=0`); // 400 problem
    const history = await checked<{ batchId: string }[]>(
      'GET',
      `${P}/projects/{id}/history`,
      `${P}/projects/shop/history?plugin=${PLUGIN_ID}`,
    );
    expect(history.json.map((entry) => entry.batchId)).toEqual([retry.json.batchId, batch.json.batchId]);
    await checked('GET', `${P}/projects/{id}/history`, `${P}/projects/shop/history`); // 400 problem
    await checked('GET', `${P}/projects/{id}/history`, `${P}/projects/nope/history?plugin=${PLUGIN_ID}`); // 404
    const actions = await checked<{ batchId?: string; actions: { id: string; risk: string }[] }>(
      'GET',
      `${P}/projects/{id}/actions`,
      `${P}/projects/shop/actions?plugin=${PLUGIN_ID}`,
    );
    expect(actions.json.batchId).toBe(retry.json.batchId);
    expect(actions.json.actions).toEqual([expect.objectContaining({ id: 'fixture.echo', risk: 'none' })]);
    await checked('GET', `${P}/projects/{id}/actions`, `${P}/projects/shop/actions`); // 400 problem
    await checked('GET', `${P}/projects/{id}/actions`, `${P}/projects/nope/actions?plugin=${PLUGIN_ID}`); // 404
    await checked('POST', `${P}/batches/{id}/cancel`, `${P}/batches/${retry.json.batchId}/cancel`, {
      body: {},
    });
    for (const format of ['jsonl', 'csv'])
      await streamed(
        `${P}/batches/{id}/export`,
        `${P}/batches/${batch.json.batchId}/export?format=${format}`,
      );

    const operation = await checked<{ id: string }>('POST', `${P}/operations`, `${P}/operations`, {
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', input: { hello: 'world' } },
      headers: { 'idempotency-key': 'openapi-1' },
    });
    const opEvents = await readEvents(api, `${P}/operations/${operation.json.id}/events`, api.adminToken);
    covered.set(`get ${P}/operations/{id}/events`, new Set([opEvents.status]));
    const replay = await checked('POST', `${P}/operations`, `${P}/operations`, {
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', input: { hello: 'world' } },
      headers: { 'idempotency-key': 'openapi-1' },
    });
    expect(replay.status).toBe(200);
    const done = await waitFor('the operation to finish', async () => {
      const answer = await call<{ state: string }>(api, 'GET', `${P}/operations/${operation.json.id}`, {
        token: api.adminToken,
      });
      return answer.json.state === 'succeeded' ? answer : undefined;
    });
    validate('GET', `${P}/operations/{id}`, done);
    await checked('GET', `${P}/operations`, `${P}/operations?projectId=shop`);
    await checked('GET', `${P}/operations`, `${P}/operations?pluginId=${PLUGIN_ID}&state=succeeded&limit=1`);
    await checked('GET', `${P}/operations/{id}/logs`, `${P}/operations/${operation.json.id}/logs`);
    await checked(
      'GET',
      `${P}/operations/resolve`,
      `${P}/operations/resolve?ref=${operation.json.id.slice(3, 11)}`,
    );
    await checked('GET', `${P}/operations/resolve`, `${P}/operations/resolve?ref=latest~99`); // 404 problem
    await checked('POST', `${P}/operations/{id}/cancel`, `${P}/operations/${operation.json.id}/cancel`);

    // A rollout of the harmless fixture.echo starts at once; approving it is then a 409 problem.
    const rollout = await checked<{ id: string }>('POST', `${P}/rollouts`, `${P}/rollouts`, {
      body: { pluginId: PLUGIN_ID, action: 'fixture.echo', projects: ['shop'], input: { hello: 'rollout' } },
    });
    await checked('POST', `${P}/rollouts`, `${P}/rollouts`, {
      body: { pluginId: PLUGIN_ID, action: 'fixture.echo', all: true, waves: '0' },
    }); // 400 problem naming --waves
    await checked('GET', `${P}/rollouts`, `${P}/rollouts?pluginId=${PLUGIN_ID}&limit=5`);
    await checked('GET', `${P}/rollouts/resolve`, `${P}/rollouts/resolve?ref=latest`);
    await checked('GET', `${P}/rollouts/{id}`, `${P}/rollouts/${rollout.json.id}`);
    await checked('GET', `${P}/rollouts/{id}/projects`, `${P}/rollouts/${rollout.json.id}/projects?limit=10`);
    await checked('POST', `${P}/rollouts/{id}/approve`, `${P}/rollouts/${rollout.json.id}/approve`);
    await checked('POST', `${P}/rollouts/{id}/pause`, `${P}/rollouts/${rollout.json.id}/pause`);
    await checked('POST', `${P}/rollouts/{id}/resume`, `${P}/rollouts/${rollout.json.id}/resume`);
    await checked('POST', `${P}/rollouts/{id}/cancel`, `${P}/rollouts/${rollout.json.id}/cancel`);
    await checked('POST', `${P}/rollouts/{id}/retry`, `${P}/rollouts/${rollout.json.id}/retry`, {
      body: { failed: true },
    }); // 400: nothing failed
    for (const format of ['jsonl', 'csv'])
      await streamed(`${P}/rollouts/{id}/export`, `${P}/rollouts/${rollout.json.id}/export?format=${format}`);
    // A preview by fixture.echo (risk none) of another action: it runs, then the rollout awaits approval.
    const previewed = await checked<{ id: string }>('POST', `${P}/rollouts`, `${P}/rollouts`, {
      body: {
        pluginId: PLUGIN_ID,
        action: 'fixture.other',
        previewAction: 'fixture.echo',
        projects: ['shop'],
      },
    });
    await waitFor('the preview to end', async () => {
      const answer = await call<{ state: string }>(api, 'GET', `${P}/rollouts/${previewed.json.id}`, {
        token: api.adminToken,
      });
      return answer.json.state === 'awaiting-approval' ? answer : undefined;
    });
    const previews = await checked<{ items: { preview?: { state: string } }[] }>(
      'GET',
      `${P}/rollouts/{id}/projects`,
      `${P}/rollouts/${previewed.json.id}/projects`,
    );
    expect(previews.json.items[0]?.preview?.state).toBe('succeeded');
    await checked('POST', `${P}/rollouts`, `${P}/rollouts`, {
      body: { pluginId: PLUGIN_ID, action: 'fixture.echo', all: true, previewAction: 'fixture.other' },
    }); // 400 problem: the preview action's risk is not none

    const schedule = await checked<{ id: string }>('POST', `${P}/schedules`, `${P}/schedules`, {
      body: { pluginId: PLUGIN_ID, projects: 'all', cron: '0 3 * * *' },
    });
    await checked('POST', `${P}/schedules/{id}`, `${P}/schedules/${schedule.json.id}`, {
      body: { name: 'openapi-nightly', cron: '0 4 * * *' },
    });
    await checked('POST', `${P}/schedules/{id}/pause`, `${P}/schedules/openapi-nightly/pause`, { body: {} });
    await checked('POST', `${P}/schedules/{id}/resume`, `${P}/schedules/openapi-nightly/resume`, {
      body: {},
    });
    await checked('GET', `${P}/schedules`, `${P}/schedules`);
    await checked('POST', `${P}/batches/cancel`, `${P}/batches/cancel`, { body: { state: 'running' } });
    const removed = await checked('DELETE', `${P}/schedules/{id}`, `${P}/schedules/${schedule.json.id}`);
    expect(removed.json).toEqual({ id: schedule.json.id, removed: true, cancelledBatches: [] });
    // Gone now: an unknown id is a 404 problem, as for every other kind of id.
    const again = await checked<{ code: string; detail: string }>(
      'DELETE',
      `${P}/schedules/{id}`,
      `${P}/schedules/${schedule.json.id}`,
    );
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ code: 'NOT_FOUND' });
    expect(again.json.detail).toMatch(/schedule list shows the known ones/);

    const viewer = await checked<{ id: string; token: string }>('POST', `${P}/tokens`, `${P}/tokens`, {
      body: { name: 'openapi-viewer', role: 'viewer', expiresInMs: 86_400_000 },
    });
    await checked('GET', `${P}/me`, `${P}/me`, { token: viewer.json.token });
    await checked('POST', `${P}/tokens`, `${P}/tokens`, {
      token: viewer.json.token,
      body: { name: 'x', role: 'viewer' },
    }); // 403 problem naming the role
    await checked('GET', `${P}/me`, `${P}/me`, { token: 'sy_nope' }); // 401 problem
    await checked('GET', `${P}/tokens`, `${P}/tokens`);
    await checked('GET', `${P}/audit`, `${P}/audit`);
    await checked('GET', `${P}/audit`, `${P}/audit?action=batch.&since=1h&limit=2`);
    await checked('DELETE', `${P}/tokens/{id}`, `${P}/tokens/${viewer.json.id}`);
    await checked('DELETE', `${P}/projects/{id}`, `${P}/projects/blog`);
    await checked('POST', `${P}/plugins/{id}/disable`, `${P}/plugins/${PLUGIN_ID}/disable`);

    const hook = await checked<{ id: string }>('POST', `${P}/webhooks`, `${P}/webhooks`, {
      body: { url: 'http://127.0.0.1:9/hook', events: ['batch.finished'], secret: 'openapi-secret' },
    });
    await checked('GET', `${P}/webhooks`, `${P}/webhooks`);
    await checked('GET', `${P}/webhooks/deliveries`, `${P}/webhooks/deliveries`);
    await checked('GET', `${P}/webhooks/{id}/deliveries`, `${P}/webhooks/${hook.json.id}/deliveries`);
    await checked('POST', `${P}/webhooks/{id}`, `${P}/webhooks/${hook.json.id}`, {
      body: { events: ['batch.finished', 'operation.finished'], active: false },
    });
    await checked('POST', `${P}/webhooks/{id}/secret`, `${P}/webhooks/${hook.json.id}/secret`, {
      body: { secret: 'openapi-secret-2', previousValidForMs: 60_000 },
    });
    const pinged = await checked<{ deliveryId: string }>(
      'POST',
      `${P}/webhooks/{id}/ping`,
      `${P}/webhooks/${hook.json.id}/ping`,
      { body: {} },
    );
    await checked(
      'GET',
      `${P}/webhooks/deliveries/{id}`,
      `${P}/webhooks/deliveries/${pinged.json.deliveryId}`,
    );
    // Still pending (no worker here): a 409 problem.
    await checked(
      'POST',
      `${P}/webhooks/deliveries/{id}/redeliver`,
      `${P}/webhooks/deliveries/${pinged.json.deliveryId}/redeliver`,
      { body: {} },
    );
    await checked('DELETE', `${P}/webhooks/{id}`, `${P}/webhooks/${hook.json.id}`);

    // The fair share's teams and the queue's view.
    const team = await checked<{ team: string; weight: number }>(
      'POST',
      `${P}/teams/{team}`,
      `${P}/teams/openapi-team`,
      { body: { weight: 3 } },
    );
    expect(team.json).toMatchObject({ team: 'openapi-team', weight: 3 });
    await checked('GET', `${P}/teams`, `${P}/teams`);
    await checked('GET', `${P}/queue`, `${P}/queue`);

    // Every documented route was called at least once.
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(documented.filter((route) => !covered.has(route))).toEqual([]);
    // Success bodies are described, not just "OK".
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, operation] of Object.entries(methods)) {
        const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
        expect(success?.[1].content, `${method} ${path}`).toBeDefined();
      }
  }, 120_000);
});
