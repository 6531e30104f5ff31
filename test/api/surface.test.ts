// The surface of a real `switchyard api` process: the OpenAPI document,
// security headers, cross-origin refusal, and the binding rules
// (non-loopback needs TLS or --insecure-http).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import {
  call,
  expectProblem,
  globalArgs,
  runCli,
  spawnCli,
  setUpApi,
  stopProc,
  waitFor,
  type Api,
  type ApiSetup,
  type Installation,
} from './support.js';

/** Every route of docs/HTTP-API.md, in OpenAPI path syntax. */
const DOCUMENTED: [string, string][] = [
  ['get', '/api/v1/plugins'],
  ['get', '/api/v1/plugins/{id}'],
  ['post', '/api/v1/plugins/refresh'],
  ['post', '/api/v1/plugins/{id}/trust'],
  ['post', '/api/v1/plugins/{id}/enable'],
  ['post', '/api/v1/plugins/{id}/disable'],
  ['post', '/api/v1/plugins/{id}/health'],
  ['get', '/api/v1/plugins/{id}/logs'],
  ['get', '/api/v1/plugins/{id}/facts'],
  ['get', '/api/v1/plugins/{id}/facts/counts'],
  ['get', '/api/v1/plugins/{id}/trend'],
  ['get', '/api/v1/projects'],
  ['post', '/api/v1/projects'],
  ['post', '/api/v1/projects/scan'],
  ['post', '/api/v1/projects/{id}/trust'],
  ['post', '/api/v1/projects/{id}/untrust'],
  ['post', '/api/v1/projects/{id}/labels'],
  ['delete', '/api/v1/projects/{id}/labels/{label}'],
  ['delete', '/api/v1/projects/{id}'],
  ['get', '/api/v1/projects/{id}/history'],
  ['get', '/api/v1/projects/{id}/actions'],
  ['post', '/api/v1/batches'],
  ['get', '/api/v1/batches'],
  ['post', '/api/v1/batches/cancel'],
  ['post', '/api/v1/batches/{id}/cancel'],
  ['post', '/api/v1/batches/{id}/retry'],
  ['get', '/api/v1/batches/{id}/previous'],
  ['get', '/api/v1/batches/resolve'],
  ['get', '/api/v1/batches/{id}/diff'],
  ['get', '/api/v1/batches/{id}/export'],
  ['get', '/api/v1/batches/{id}'],
  ['get', '/api/v1/batches/{id}/events'],
  ['get', '/api/v1/batches/{id}/results'],
  ['post', '/api/v1/operations'],
  ['get', '/api/v1/operations'],
  ['get', '/api/v1/operations/resolve'],
  ['get', '/api/v1/operations/{id}'],
  ['post', '/api/v1/operations/{id}/cancel'],
  ['get', '/api/v1/operations/{id}/events'],
  ['get', '/api/v1/schedules'],
  ['post', '/api/v1/schedules'],
  ['post', '/api/v1/schedules/{id}'],
  ['post', '/api/v1/schedules/{id}/pause'],
  ['post', '/api/v1/schedules/{id}/resume'],
  ['delete', '/api/v1/schedules/{id}'],
  ['get', '/api/v1/audit'],
  ['get', '/api/v1/tokens'],
  ['post', '/api/v1/tokens'],
  ['delete', '/api/v1/tokens/{id}'],
  ['get', '/api/v1/me'],
  ['get', '/api/v1/openapi.json'],
];

let setup: ApiSetup | undefined;
let installation: Installation;
let api: Api;

beforeAll(async () => {
  setup = await setUpApi('api-surface');
  ({ installation, api } = setup);
});

afterAll(async () => {
  await setup?.close();
});

describe('GET /api/v1/openapi.json', () => {
  it('needs a token', async () => {
    expectProblem(await call(api, 'GET', '/api/v1/openapi.json'), 401);
  });

  it('is an OpenAPI 3.1 document listing every documented route, trust with a requestBody schema', async () => {
    const answer = await call<{
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, Record<string, unknown>>>;
    }>(api, 'GET', '/api/v1/openapi.json', { token: api.adminToken });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type') ?? '').toMatch(/^application\/json/);
    const doc = answer.json;
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(Object.keys(doc.paths).filter((path) => path.includes(':'))).toEqual([]);
    for (const [method, path] of DOCUMENTED) {
      expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
    }

    const trust = doc.paths['/api/v1/plugins/{id}/trust']?.post as {
      parameters?: { name: string; in: string }[];
      requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
      responses?: Record<string, unknown>;
    };
    expect(trust.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path' })]);
    const schema = trust.requestBody?.content?.['application/json']?.schema as {
      type?: string;
      properties?: Record<string, { type?: string; pattern?: string }>;
      required?: string[];
      additionalProperties?: unknown;
    };
    expect(schema, JSON.stringify(trust)).toBeDefined();
    expect(schema.type).toBe('object');
    expect(schema.properties?.fingerprint).toMatchObject({ type: 'string' });
    expect(schema.properties?.fingerprint?.pattern).toEqual(expect.any(String));
    expect(new RegExp(schema.properties!.fingerprint!.pattern!).test('a'.repeat(64))).toBe(true);
    expect(schema.required).toEqual(['fingerprint']);
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(trust.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404']),
    );
  });
});

describe('security headers and origins', () => {
  it('Content-Security-Policy on / (the web UI)', async () => {
    const response = await fetch(`${api.base}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type') ?? '').toMatch(/^text\/html/);
    expect(await response.text()).toMatch(/<html/i);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('Content-Security-Policy on API answers, successful or not', async () => {
    const ok = await call(api, 'GET', '/api/v1/plugins', { token: api.adminToken });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await call(api, 'GET', '/api/v1/plugins');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
  });

  it('a request with Origin: http://evil.example → 403, even with a valid token', async () => {
    const answer = await call(api, 'GET', '/api/v1/plugins', {
      token: api.adminToken,
      headers: { origin: 'http://evil.example' },
    });
    expectProblem(answer, 403);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const post = await call(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      headers: { origin: 'http://evil.example' },
      body: { name: 'from-evil', role: 'admin' },
    });
    expectProblem(post, 403);
    const list = await call<{ name: string }[]>(api, 'GET', '/api/v1/tokens', { token: api.adminToken });
    expect(list.json.map((token) => token.name)).not.toContain('from-evil');
    // The same origin is served.
    const same = await call(api, 'GET', '/api/v1/plugins', {
      token: api.adminToken,
      headers: { origin: `http://127.0.0.1:${api.port}` },
    });
    expect(same.status, same.text).toBe(200);
  });
});

describe('binding', () => {
  it('api --host 0.0.0.0 without TLS exits 2 and points at --insecure-http', async () => {
    const port = await freePort();
    const result = await runCli(
      [...globalArgs(installation), 'api', '--host', '0.0.0.0', '--port', String(port)],
      20_000,
    );
    expect(result.code, result.output).toBe(2);
    expect(result.output).toMatch(/--insecure-http/);
    // Nothing listens there.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('api --host 0.0.0.0 --insecure-http starts (and stops on SIGTERM)', async () => {
    const port = await freePort();
    const proc = spawnCli([
      ...globalArgs(installation),
      'api',
      '--host',
      '0.0.0.0',
      '--port',
      String(port),
      '--insecure-http',
    ]);
    try {
      const status = await waitFor(
        'the insecure api to answer',
        async () => {
          if (!proc.running()) throw new Error(`api exited:\n${proc.output()}`);
          try {
            const response = await fetch(`http://127.0.0.1:${port}/healthz`);
            await response.arrayBuffer();
            return response.status;
          } catch {
            return undefined;
          }
        },
        20_000,
      );
      expect([200, 503]).toContain(status);
      expect(proc.output()).toMatch(/insecure-http|plain HTTP/);
    } finally {
      await stopProc(proc);
    }
    expect((await proc.exited).code).toBe(0);
  });
});
