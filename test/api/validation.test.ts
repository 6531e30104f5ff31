// Request validation of /api/v1 against a real `switchyard api` process:
// strict bodies (unknown fields, wrong types) → 400 naming the field, a body
// over 64 KiB → 413, invalid JSON → 400, unknown ids → 404, review decisions
// that do not match the plugin → 400/409, all as application/problem+json.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, installPackage, makeProject } from '../support/data-dir.js';
import {
  ALL_SCOPES,
  PLUGIN_ID,
  call,
  expectProblem,
  setUpApi,
  type Api,
  type ApiSetup,
  type CallOptions,
} from './support.js';

/** A copy of the fixture that requests only project.metadata.read. */
const NARROW_ID = 'narrow-inspector';

let setup: ApiSetup | undefined;
let root: string;
let api: Api;
let token = '';
const fingerprints: Record<string, string> = {};

beforeAll(async () => {
  setup = await setUpApi('api-validation', async (root, dataDir) => {
    const narrow = await installPackage(dataDir, FIXTURE_INSPECTOR_DIST, NARROW_ID);
    const manifest = JSON.parse(await readFile(join(narrow, 'plugin.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    await writeFile(
      join(narrow, 'plugin.json'),
      `${JSON.stringify(
        {
          ...manifest,
          id: NARROW_ID,
          name: 'Narrow inspector',
          capabilities: ['project.inspect'],
          requestedScopes: ['project.metadata.read'],
        },
        null,
        2,
      )}\n`,
    );
    await makeProject(join(root, 'projects'), 'shop', ['package.json']);
  });
  ({ root, api } = setup);
  token = api.adminToken;

  const refreshed = await call<{ id: string; fingerprint: string }[]>(
    api,
    'POST',
    '/api/v1/plugins/refresh',
    {
      token,
      body: {},
    },
  );
  expect(refreshed.status, refreshed.text).toBe(200);
  for (const plugin of refreshed.json) fingerprints[plugin.id] = plugin.fingerprint;
  expect(Object.keys(fingerprints).sort()).toEqual([PLUGIN_ID, NARROW_ID].sort());
});

afterAll(async () => {
  await setup?.close();
});

describe('invalid bodies', () => {
  it('an unknown body field → 400 problem+json whose errors[].field names it', async () => {
    const answer = await call(api, 'POST', '/api/v1/tokens', {
      token,
      body: { name: 'with-extra', role: 'viewer', favouriteColour: 'green' },
    });
    const problem = expectProblem(answer, 400);
    expect(problem.errors, answer.text).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'favouriteColour' })]),
    );
    // Nothing was created.
    const list = await call<{ name: string }[]>(api, 'GET', '/api/v1/tokens', { token });
    expect(list.json.map((item) => item.name)).not.toContain('with-extra');
  });

  it('an unknown field next to valid ones on another route is named too', async () => {
    const answer = await call(api, 'POST', '/api/v1/projects/scan', {
      token,
      body: { dir: join(root, 'projects'), trust: true, recursive: true },
    });
    const problem = expectProblem(answer, 400);
    expect(problem.errors, answer.text).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'recursive' })]),
    );
  });

  it('a wrong type → 400 naming the field', async () => {
    const answer = await call(api, 'POST', '/api/v1/projects', { token, body: { path: 42 } });
    const problem = expectProblem(answer, 400);
    expect(problem.errors, answer.text).toEqual([expect.objectContaining({ field: 'path' })]);

    const trust = await call(api, 'POST', '/api/v1/projects', {
      token,
      body: { path: join(root, 'projects', 'shop'), trust: 'yes' },
    });
    expect(expectProblem(trust, 400).errors, trust.text).toEqual([
      expect.objectContaining({ field: 'trust' }),
    ]);

    const scopes = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/enable`, {
      token,
      body: { scopes: [7] },
    });
    expect(expectProblem(scopes, 400).errors, scopes.text).toEqual([
      expect.objectContaining({ field: 'scopes.0' }),
    ]);
  });

  it('a body over 64 KiB → 413 problem+json', async () => {
    const answer = await call(api, 'POST', '/api/v1/tokens', {
      token,
      body: { name: 'big', role: 'viewer', padding: 'x'.repeat(65 * 1024) },
    });
    const problem = expectProblem(answer, 413);
    expect(problem.detail).toMatch(/65536|64 KiB/);
    // Just under the limit is parsed (and then refused for its content, not its size).
    const under = await call(api, 'POST', '/api/v1/tokens', {
      token,
      body: { name: 'big', role: 'viewer', padding: 'x'.repeat(60 * 1024) },
    });
    expectProblem(under, 400);
  });

  it('invalid JSON → 400 problem+json', async () => {
    const answer = await call(api, 'POST', '/api/v1/tokens', {
      token,
      rawBody: '{"name": "broken", "role":',
    });
    const problem = expectProblem(answer, 400);
    expect(problem.detail).toMatch(/JSON/);
  });
});

describe('errors the framework raises carry a code too (HTTP-API.md: every error has one)', () => {
  const deep = `{"name":"deep","role":"viewer","padding":${'['.repeat(100)}${']'.repeat(100)}}`;
  const cases: [string, string, string, CallOptions, number, string][] = [
    [
      'a body over 64 KiB',
      'POST',
      '/api/v1/tokens',
      { body: { name: 'big', role: 'viewer', padding: 'x'.repeat(65 * 1024) } },
      413,
      'BODY_TOO_LARGE',
    ],
    [
      'a body that is not JSON',
      'POST',
      '/api/v1/tokens',
      { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a text/plain body (HTTP-API.md: a body that is not application/json)',
      'POST',
      '/api/v1/tokens',
      { rawBody: '{"name":"x","role":"viewer"}', headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['malformed JSON', 'POST', '/api/v1/tokens', { rawBody: '{"name":' }, 400, 'INVALID_INPUT'],
    ['JSON nested too deep', 'POST', '/api/v1/tokens', { rawBody: deep }, 400, 'JSON_TOO_DEEP'],
    ['an unknown route', 'GET', '/api/v1/no-such-route', {}, 404, 'ROUTE_NOT_FOUND'],
    ['a path the router cannot decode', 'GET', '/api/v1/plugins/%zz', {}, 400, 'BAD_URL'],
    ['a method a route does not have', 'PUT', '/api/v1/plugins', { body: {} }, 404, 'ROUTE_NOT_FOUND'],
    [
      'a cross-origin request',
      'GET',
      '/api/v1/plugins',
      { headers: { origin: 'http://evil.example' } },
      403,
      'CROSS_ORIGIN_REFUSED',
    ],
  ];
  for (const [what, method, path, options, status, code] of cases) {
    it(`${what} → ${status} with code ${code}`, async () => {
      const answer = await call(api, method, path, { token, ...options });
      expectProblem(answer, status);
      expect((answer.json as { code?: string }).code, answer.text).toBe(code);
    });
  }
});

describe('unknown ids → 404 problem+json', () => {
  const cases: [string, string, unknown?][] = [
    ['GET', '/api/v1/plugins/no-such-plugin'],
    ['POST', '/api/v1/plugins/no-such-plugin/trust', { fingerprint: 'a'.repeat(64) }],
    ['POST', '/api/v1/plugins/no-such-plugin/enable', { scopes: ['project.metadata.read'] }],
    ['POST', '/api/v1/plugins/no-such-plugin/disable', {}],
    ['GET', '/api/v1/plugins/no-such-plugin/logs'],
    ['POST', '/api/v1/projects/no-such-project/trust', {}],
    ['DELETE', '/api/v1/projects/no-such-project'],
    ['GET', '/api/v1/batches/no-such-batch'],
    ['GET', '/api/v1/batches/no-such-batch/events'],
    ['POST', '/api/v1/batches', { pluginId: 'no-such-plugin', projects: 'all' }],
    ['GET', '/api/v1/operations/no-such-operation'],
    ['GET', '/api/v1/operations/no-such-operation/events'],
    ['POST', '/api/v1/operations/no-such-operation/cancel', {}],
    ['POST', '/api/v1/operations', { pluginId: 'no-such-plugin', projectId: 'shop', action: 'fixture.echo' }],
    ['DELETE', '/api/v1/tokens/no-such-token'],
  ];
  for (const [method, path, body] of cases) {
    it(`${method} ${path}`, async () => {
      const answer = await call(api, method, path, { token, ...(body !== undefined ? { body } : {}) });
      expectProblem(answer, 404);
    });
  }

  describe('an unknown project, with the plugin trusted and enabled', () => {
    beforeAll(async () => {
      const trusted = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/trust`, {
        token,
        body: { fingerprint: fingerprints[PLUGIN_ID] },
      });
      expect(trusted.status, trusted.text).toBe(200);
      const enabled = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/enable`, {
        token,
        body: { scopes: ALL_SCOPES },
      });
      expect(enabled.status, enabled.text).toBe(200);
    });

    it('POST /api/v1/batches {projects:["no-such-project"]}', async () => {
      expectProblem(
        await call(api, 'POST', '/api/v1/batches', {
          token,
          body: { pluginId: PLUGIN_ID, projects: ['no-such-project'] },
        }),
        404,
      );
    });

    it('POST /api/v1/operations with an input that is not one JSON object → 400 naming input', async () => {
      for (const input of [[1, 2], 'text', 7, null]) {
        const problem = expectProblem(
          await call(api, 'POST', '/api/v1/operations', {
            token,
            body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo', input },
          }),
          400,
        );
        expect(JSON.stringify(problem), JSON.stringify(input)).toMatch(/input/);
      }
    });

    it('POST /api/v1/operations {projectId:"no-such-project"}', async () => {
      expectProblem(
        await call(api, 'POST', '/api/v1/operations', {
          token,
          body: { pluginId: PLUGIN_ID, projectId: 'no-such-project', action: 'fixture.echo' },
        }),
        404,
      );
    });
  });
});

describe('review decisions that do not match the plugin', () => {
  it('trust with a valid hex fingerprint that is not the current one → 400/409 with a clear detail', async () => {
    const current = fingerprints[NARROW_ID]!;
    const other = (current[0] === '0' ? '1' : '0') + current.slice(1);
    const answer = await call(api, 'POST', `/api/v1/plugins/${NARROW_ID}/trust`, {
      token,
      body: { fingerprint: other },
    });
    expect([400, 409], answer.text).toContain(answer.status);
    const problem = expectProblem(answer, answer.status);
    expect(problem.detail).toMatch(/fingerprint/i);
    expect(problem.detail).toMatch(/differs|not the current|changed|does not match/i);
    const shown = await call<{ trust: string }>(api, 'GET', `/api/v1/plugins/${NARROW_ID}`, { token });
    expect(shown.json.trust).toBe('untrusted');
  });

  it('a fingerprint that is not 64 lower-case hex → 400 naming the field', async () => {
    const answer = await call(api, 'POST', `/api/v1/plugins/${NARROW_ID}/trust`, {
      token,
      body: { fingerprint: fingerprints[NARROW_ID]!.slice(0, 12) },
    });
    expect(expectProblem(answer, 400).errors).toEqual([expect.objectContaining({ field: 'fingerprint' })]);
  });

  it('enabling a scope the plugin did not request → 400, nothing granted', async () => {
    const trusted = await call(api, 'POST', `/api/v1/plugins/${NARROW_ID}/trust`, {
      token,
      body: { fingerprint: fingerprints[NARROW_ID] },
    });
    expect(trusted.status, trusted.text).toBe(200);
    const answer = await call(api, 'POST', `/api/v1/plugins/${NARROW_ID}/enable`, {
      token,
      body: { scopes: ['project.metadata.read', 'project.files.read'] },
    });
    const problem = expectProblem(answer, 400);
    expect(problem.detail).toMatch(/project\.files\.read/);
    expect(problem.detail).toMatch(/not requested/);
    const shown = await call<{ enabled: boolean; grantedScopes: string[] }>(
      api,
      'GET',
      `/api/v1/plugins/${NARROW_ID}`,
      { token },
    );
    expect(shown.json).toMatchObject({ enabled: false, grantedScopes: [] });
  });
});
