// The review path over HTTP, end to end, against a real `switchyard api`, a
// real `worker --concurrency 2` and a real `scheduler`: /healthz before and
// after they run, refresh → show → trust → enable → projects → batch, the
// batch and operation event streams (fetch + streaming body), Idempotency-Key,
// and /metrics after a batch ran.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchView } from '../../src/core/work/batches/batch-store.js';
import { containment } from '../../src/core/supervision/containment.js';
import { makeProject } from '../support/data-dir.js';
import {
  ALL_SCOPES,
  PLUGIN_ID,
  call,
  readEvents,
  setUpApi,
  startScheduler,
  startWorker,
  waitFor,
  type Api,
  type ApiSetup,
  type Installation,
} from './support.js';

interface Plugin {
  id: string;
  fingerprint: string;
  trust: string;
  enabled: boolean;
  grantedScopes: string[];
  requestedScopes: string[];
}
interface Project {
  id: string;
  displayName: string;
  root: string;
  trusted: boolean;
}
interface BatchResult {
  projectId: string;
  status: 'succeeded' | 'failed';
  result?: { summary: string; facts: { value: string }[] };
  error?: { code: string; message: string };
}
type Batch = Omit<BatchView, 'results'> & { results?: BatchResult[] };
interface Operation {
  id: string;
  pluginId: string;
  projectId: string;
  action: string;
  state: string;
  result?: { output: unknown };
  requestedAt: string;
}
interface WorkerReport {
  worker: string;
  mechanism: string;
  enforced: string[];
  missing: string[];
}
interface Health {
  status: string;
  redis: boolean;
  workers: number;
  scheduler: boolean;
  confinement: WorkerReport[];
}

/** Each report says what this very host enforces for plugin calls, and what it does not. */
function expectThisHost(reports: WorkerReport[]): void {
  const local = containment();
  expect(local.enforced.length).toBeGreaterThan(0);
  expect(reports.length).toBeGreaterThanOrEqual(1);
  for (const report of reports) {
    expect(report.mechanism, report.worker).toBe(local.mechanism);
    expect(report.enforced, report.worker).toEqual(local.enforced);
    expect(report.missing, report.worker).toEqual(local.missing);
  }
}

const TERMINAL = ['succeeded', 'failed', 'cancelled'];

let setup: ApiSetup | undefined;
let root: string;
let installation: Installation;
let api: Api;
let token = '';

beforeAll(async () => {
  setup = await setUpApi('api-review', async (root) => {
    await makeProject(join(root, 'projects'), 'Shop', ['package.json']);
    const blog = await makeProject(join(root, 'projects'), 'blog');
    await writeFile(join(blog, 'go.mod'), 'module blog\n');
    await makeProject(join(root, 'elsewhere'), 'docs', ['.switchyard/project.yml']);
  });
  ({ root, installation, api } = setup);
  token = api.adminToken;
});

afterAll(async () => {
  await setup?.close();
});

async function metrics(): Promise<string> {
  const response = await fetch(`${api.base}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type') ?? '').toMatch(/^text\/plain/);
  return response.text();
}

async function batchUntilFinished(batchId: string): Promise<Batch> {
  return waitFor(
    `batch ${batchId} to finish`,
    async () => {
      const answer = await call<Batch>(api, 'GET', `/api/v1/batches/${batchId}`, { token });
      expect(answer.status, answer.text).toBe(200);
      return answer.json.state !== 'running' ? answer.json : undefined;
    },
    30_000,
    200,
  );
}

describe.sequential('over HTTP, with real worker and scheduler processes', () => {
  it('/healthz is 503 without a worker and a scheduler, 200 once both run', async () => {
    const none = await call<Health>(api, 'GET', '/healthz');
    expect(none.status, none.text).toBe(503);
    expect(none.json).toMatchObject({ redis: true, workers: 0, scheduler: false });

    await startWorker(installation);
    const workerOnly = await waitFor('the worker to be counted', async () => {
      const answer = await call<Health>(api, 'GET', '/healthz');
      return answer.json.workers >= 1 ? answer : undefined;
    });
    expect(workerOnly.status, `a worker without a scheduler: ${workerOnly.text}`).toBe(503);

    await startScheduler(installation);
    const both = await waitFor(
      '/healthz to answer 200',
      async () => {
        const answer = await call<Health>(api, 'GET', '/healthz');
        return answer.status === 200 ? answer : undefined;
      },
      15_000,
    );
    expect(both.json).toMatchObject({ status: 'ok', redis: true, scheduler: true });
    expect(both.json.workers).toBeGreaterThanOrEqual(1);
    // Each running worker lists the confinement mechanisms in force on its host, and those missing.
    expectThisHost(both.json.confinement);
  });

  it('refresh → GET plugin (osTrustBoundary, scopeDescriptions, 64-hex fingerprint) → trust → enable', async () => {
    const refreshed = await call<Plugin[]>(api, 'POST', '/api/v1/plugins/refresh', { token, body: {} });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.json.find((plugin) => plugin.id === PLUGIN_ID)).toMatchObject({
      trust: 'untrusted',
      enabled: false,
    });

    const shown = await call<
      Plugin & {
        osTrustBoundary: string;
        scopeDescriptions: Record<string, string>;
        manifestPath: string;
        containment: WorkerReport & { workers: WorkerReport[] };
      }
    >(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, { token });
    expect(shown.status, shown.text).toBe(200);
    // What is enforced, as the api's host sees it and as each worker reported it.
    expectThisHost([{ ...shown.json.containment, worker: 'the api' }, ...shown.json.containment.workers]);
    expect(shown.json.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.json.osTrustBoundary).toMatch(/operating-system identity/);
    expect(shown.json.manifestPath).toEqual(expect.any(String));
    for (const scope of shown.json.requestedScopes) {
      expect(shown.json.scopeDescriptions[scope], scope).toEqual(expect.any(String));
      expect(shown.json.scopeDescriptions[scope]!.length).toBeGreaterThan(10);
    }
    expect([...shown.json.requestedScopes].sort()).toEqual([...ALL_SCOPES].sort());

    const trusted = await call<Plugin>(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/trust`, {
      token,
      body: { fingerprint: shown.json.fingerprint },
    });
    expect(trusted.status, trusted.text).toBe(200);
    expect(trusted.json).toMatchObject({
      id: PLUGIN_ID,
      trust: 'trusted',
      enabled: false,
      grantedScopes: [],
    });

    // Before enable, a batch is refused as a state conflict.
    const early = await call(api, 'POST', '/api/v1/batches', {
      token,
      body: { pluginId: PLUGIN_ID, projects: 'all' },
    });
    expect(early.status, early.text).toBe(409);

    const enabled = await call<Plugin>(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/enable`, {
      token,
      body: { scopes: ALL_SCOPES },
    });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.json.enabled).toBe(true);
    expect([...enabled.json.grantedScopes].sort()).toEqual([...ALL_SCOPES].sort());
  });

  it('projects: POST /projects and POST /projects/scan with trust', async () => {
    const added = await call<Project>(api, 'POST', '/api/v1/projects', {
      token,
      body: { path: join(root, 'elsewhere', 'docs'), id: 'docs', name: 'Docs', trust: true },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.json).toEqual({
      id: 'docs',
      displayName: 'Docs',
      root: join(root, 'elsewhere', 'docs'),
      trusted: true,
      labels: [],
    });

    const scanned = await call<{ registered: Project[]; refused: unknown[] }>(
      api,
      'POST',
      '/api/v1/projects/scan',
      { token, body: { dir: join(root, 'projects'), trust: true } },
    );
    expect(scanned.status, scanned.text).toBe(201);
    expect(scanned.json.refused).toEqual([]);
    expect(scanned.json.registered.map((project) => project.id).sort()).toEqual(['blog', 'shop']);
    expect(scanned.json.registered.every((project) => project.trusted)).toBe(true);

    const listed = await call<Project[]>(api, 'GET', '/api/v1/projects', { token });
    expect(listed.json.map((project) => project.id).sort()).toEqual(['blog', 'docs', 'shop']);
  });

  let firstBatchId = '';
  let metricsBefore = '';

  it('POST /batches {projects:"all"} → 202 with the batch; GET /batches/:id until finished with results', async () => {
    metricsBefore = await metrics();
    const created = await call<Batch>(api, 'POST', '/api/v1/batches', {
      token,
      body: { pluginId: PLUGIN_ID, projects: 'all' },
    });
    expect(created.status, created.text).toBe(202);
    expect(created.json).toMatchObject({
      pluginId: PLUGIN_ID,
      total: 3,
      createdBy: expect.stringMatching(/^token:/),
    });
    expect(created.json.batchId).toEqual(expect.any(String));
    firstBatchId = created.json.batchId;

    const finished = await batchUntilFinished(firstBatchId);
    expect(finished).toMatchObject({ batchId: firstBatchId, total: 3, succeeded: 3, failed: 0, pending: 0 });
    expect(finished.finishedAt).toEqual(expect.any(String));
    expect(finished.results?.map((result) => result.projectId).sort()).toEqual(['blog', 'docs', 'shop']);
    const shop = finished.results!.find((result) => result.projectId === 'shop');
    expect(shop).toMatchObject({ status: 'succeeded' });
    expect(shop?.result?.facts).toEqual([expect.objectContaining({ value: 'package.json' })]);

    const list = await call<{ items: Batch[] }>(api, 'GET', '/api/v1/batches', { token });
    const listed = list.json.items.find((batch) => batch.batchId === firstBatchId);
    expect(listed).toMatchObject({ state: 'succeeded', succeeded: 3 });
    expect(listed).not.toHaveProperty('results');
  });

  it('GET /batches/:id/events streams progress events, then done; GET /batches/:id has every result', async () => {
    const created = await call<Batch>(api, 'POST', '/api/v1/batches', {
      token,
      body: { pluginId: PLUGIN_ID, projects: 'all' },
    });
    expect(created.status, created.text).toBe(202);
    const batchId = created.json.batchId;

    const stream = await readEvents(api, `/api/v1/batches/${batchId}/events`, token, 30_000);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const names = stream.events.map((event) => event.event);
    expect(names.at(-1), names.join(',')).toBe('done');
    expect(names.filter((name) => name === 'done')).toHaveLength(1);
    expect(stream.ended, 'the server ends the stream after done').toBe(true);

    const progress = stream.events
      .filter((event) => event.event === 'progress')
      .map((event) => event.data as Batch);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const event of progress) {
      expect(event).toMatchObject({
        batchId,
        total: 3,
        succeeded: expect.any(Number),
        failed: expect.any(Number),
        pending: expect.any(Number),
        state: expect.stringMatching(/^(running|succeeded)$/),
      });
    }
    const done = stream.events.at(-1)!.data as Batch;
    expect(done).toMatchObject({ batchId, state: 'succeeded', total: 3, succeeded: 3, failed: 0 });
    // `done` carries the counts only: 16 followers of a large batch would each read it whole.
    expect(done.results).toBeUndefined();
    const whole = await call<Batch>(api, 'GET', `/api/v1/batches/${batchId}`, { token });
    expect(whole.json.results?.map((result) => result.projectId)).toEqual(['blog', 'docs', 'shop']);
    expect(whole.json.results?.every((result) => result.status === 'succeeded')).toBe(true);
  });

  it('GET /operations/:id/events streams state events and ends with done and a terminal state', async () => {
    const created = await call<Operation>(api, 'POST', '/api/v1/operations', {
      token,
      body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', input: { x: 1 } },
    });
    expect(created.status, created.text).toBe(202);
    const stream = await readEvents(api, `/api/v1/operations/${created.json.id}/events`, token, 30_000);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const names = stream.events.map((event) => event.event);
    expect(names.at(-1), names.join(',')).toBe('done');
    expect(names.slice(0, -1).every((name) => name === 'state')).toBe(true);
    expect(names.filter((name) => name === 'state').length).toBeGreaterThanOrEqual(1);
    expect(stream.ended).toBe(true);
    const done = stream.events.at(-1)!.data as Operation;
    expect(TERMINAL).toContain(done.state);
    expect(done).toMatchObject({ id: created.json.id, state: 'succeeded', result: { output: { x: 1 } } });
  });

  it('POST /operations twice with one Idempotency-Key: 202, then 200 with the same id; one operation', async () => {
    const key = `api-test-${Date.now()}`;
    const request = {
      token,
      body: { pluginId: PLUGIN_ID, projectId: 'blog', action: 'fixture.echo', input: { n: 1 } },
      headers: { 'idempotency-key': key },
    };
    const first = await call<Operation>(api, 'POST', '/api/v1/operations', request);
    expect(first.status, first.text).toBe(202);
    const second = await call<Operation>(api, 'POST', '/api/v1/operations', request);
    expect(second.status, second.text).toBe(200);
    expect(second.json.id).toBe(first.json.id);

    const listed = await call<{ items: Operation[] }>(
      api,
      'GET',
      '/api/v1/operations?projectId=blog&limit=100',
      {
        token,
      },
    );
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.items.map((operation) => operation.id)).toEqual([first.json.id]);
    const all = await call<{ items: Operation[] }>(api, 'GET', '/api/v1/operations?limit=100', { token });
    expect(all.json.items.filter((operation) => operation.id === first.json.id)).toHaveLength(1);
  });

  it('/metrics: Prometheus text with queue, health, workers and, after a batch, the call histogram', async () => {
    expect(metricsBefore).not.toMatch(
      /switchyard_plugin_call_seconds_bucket\{plugin="fixture-inspector",method="project\.inspect"/,
    );
    // A worker flushes its call metrics at most 1 s after a call (call-metrics.ts), so the
    // histogram may trail the batch's end by that much: read until both batches are in it.
    const inspections = (body: string) =>
      Number(
        /^switchyard_plugin_call_seconds_bucket\{plugin="fixture-inspector",method="project\.inspect",le="\+Inf"\} (\d+)$/m.exec(
          body,
        )?.[1] ?? 0,
      );
    const text = await waitFor(
      'both batches in the call histogram',
      async () => {
        const body = await metrics();
        return inspections(body) >= 6 ? body : undefined;
      },
      10_000,
    );
    expect(text).toMatch(/^# HELP switchyard_queue_jobs /m);
    expect(text).toMatch(/^# TYPE switchyard_queue_jobs gauge$/m);
    expect(text).toMatch(/^switchyard_queue_jobs\{queue="[^"]+",state="completed"\} \d+$/m);
    expect(text).toMatch(/^switchyard_plugin_health\{plugin="fixture-inspector",health="healthy"\} 1$/m);
    const workers = /^switchyard_workers (\d+)$/m.exec(text);
    expect(workers, text).not.toBeNull();
    expect(Number(workers![1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^# TYPE switchyard_plugin_call_seconds histogram$/m);
    const buckets = text
      .split('\n')
      .filter((line) => line.startsWith('switchyard_plugin_call_seconds_bucket{'))
      .filter(
        (line) => line.includes('plugin="fixture-inspector"') && line.includes('method="project.inspect"'),
      );
    expect(buckets.length, text).toBeGreaterThan(1);
    const infinity = buckets.find((line) => line.includes('le="+Inf"'));
    // Two batches of three projects ran.
    expect(Number(infinity?.split(' ').pop())).toBeGreaterThanOrEqual(6);
  });
});
