// The project routes a fleet owner relies on, over a real `switchyard api`:
// labels added and removed (admin; a bad label is a 400 naming the field),
// a batch over a label, the listing of a root gone missing, a scan that
// reports what it refused, and a second id over one directory refused (409).
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from '../support/data-dir.js';
import {
  PLUGIN_ID,
  call,
  expectProblem,
  setUpApi,
  trustEnableAndScan,
  type Api,
  type ApiSetup,
} from './support.js';

interface Project {
  id: string;
  root: string;
  labels: string[];
  rootMissing?: boolean;
}

let setup: ApiSetup | undefined;
let root: string;
let api: Api;
let token = '';

beforeAll(async () => {
  setup = await setUpApi('api-project-labels', async (root) => {
    for (const name of ['shop', 'blog']) await makeProject(join(root, 'projects'), name, ['package.json']);
  });
  ({ root, api } = setup);
  token = api.adminToken;
  await trustEnableAndScan(setup);
});

afterAll(async () => {
  await setup?.close();
});

describe('labels', () => {
  it('POST adds, DELETE removes, GET /projects lists them; both audited', async () => {
    const added = await call<Project>(api, 'POST', '/api/v1/projects/shop/labels', {
      token,
      body: { labels: ['web', 'prod'] },
    });
    expect(added.status, added.text).toBe(200);
    expect(added.json.labels).toEqual(['prod', 'web']);
    const removed = await call<Project>(api, 'DELETE', '/api/v1/projects/shop/labels/prod', { token });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json.labels).toEqual(['web']);
    const listed = await call<Project[]>(api, 'GET', '/api/v1/projects', { token });
    expect(listed.json.map((project) => [project.id, project.labels])).toEqual([
      ['blog', []],
      ['shop', ['web']],
    ]);
    const audit = await call<{ items: { action: string; target: string }[] }>(
      api,
      'GET',
      '/api/v1/audit?action=project.&limit=5',
      { token },
    );
    expect(audit.json.items.slice(0, 2).map((entry) => [entry.action, entry.target])).toEqual([
      ['project.unlabel', 'shop'],
      ['project.label', 'shop'],
    ]);
  });

  it('refuses a bad label (400 naming the field), an unknown project (404) and an operator (403)', async () => {
    const bad = await call(api, 'POST', '/api/v1/projects/shop/labels', {
      token,
      body: { labels: ['Web'] },
    });
    expect(expectProblem(bad, 400).errors?.[0]?.field).toBe('labels.0');
    expectProblem(await call(api, 'DELETE', '/api/v1/projects/shop/labels/No%20Way', { token }), 400);
    expectProblem(
      await call(api, 'POST', '/api/v1/projects/nope/labels', { token, body: { labels: ['web'] } }),
      404,
    );
    const operator = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      token,
      body: { name: 'labels-operator', role: 'operator' },
    });
    const refused = await call(api, 'POST', '/api/v1/projects/shop/labels', {
      token: operator.json.token,
      body: { labels: ['web'] },
    });
    expect(expectProblem(refused, 403).detail).toMatch(/admin/);
  });

  it('a batch over {label} inspects exactly the projects with it', async () => {
    const created = await call<{ batchId: string; total: number }>(api, 'POST', '/api/v1/batches', {
      token,
      body: { pluginId: PLUGIN_ID, projects: { label: 'web' } },
    });
    expect(created.status, created.text).toBe(202);
    expect(created.json.total).toBe(1);
    const none = await call(api, 'POST', '/api/v1/batches', {
      token,
      body: { pluginId: PLUGIN_ID, projects: { label: 'nobody' } },
    });
    expect(expectProblem(none, 400).detail).toMatch(/no project has the label nobody/);
  });
});

describe('the registry', () => {
  it('lists a missing root as missing', async () => {
    const gone = await makeProject(join(root, 'elsewhere'), 'gone');
    const added = await call(api, 'POST', '/api/v1/projects', { token, body: { path: gone } });
    expect(added.status, added.text).toBe(201);
    await rm(gone, { recursive: true });
    const listed = await call<Project[]>(api, 'GET', '/api/v1/projects', { token });
    expect(listed.json.map((project) => [project.id, project.rootMissing])).toEqual([
      ['blog', false],
      ['gone', true],
      ['shop', false],
    ]);
  });

  it('a scan reports each refusal and labels what it registers; a second id over one directory is a 409', async () => {
    const dir = join(root, 'more');
    for (const name of ['Twin A', 'twin-a', 'solo']) await mkdir(join(dir, name), { recursive: true });
    const scanned = await call<{ registered: Project[]; refused: { path: string; reason: string }[] }>(
      api,
      'POST',
      '/api/v1/projects/scan',
      { token, body: { dir, labels: ['more'] } },
    );
    expect(scanned.status, scanned.text).toBe(201);
    expect(scanned.json.registered.map((project) => [project.id, project.labels])).toEqual([
      ['solo', ['more']],
      ['twin-a', ['more']],
    ]);
    expect(scanned.json.refused).toEqual([
      { path: join(dir, 'twin-a'), reason: expect.stringContaining('project id twin-a clashes') },
    ]);
    const twice = await call(api, 'POST', '/api/v1/projects', {
      token,
      body: { path: join(root, 'projects', 'shop'), id: 'shop-again' },
    });
    expect(expectProblem(twice, 409)).toMatchObject({ code: 'CONFLICT' });
    expect(expectProblem(twice, 409).detail).toMatch(/is already project shop/);
  });
});
