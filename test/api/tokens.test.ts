// Tokens for people, against a real api process: an expiry (refused with a
// 401 that says the token expired), the last-used time (kept, written at most
// once a minute), GET /me, 403 bodies that name the role needed, and 401
// bodies whose hint survives the redaction of problem details.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, setUpApi, wrongSecretToken, type Api, type ApiSetup } from './support.js';

let setup: ApiSetup | undefined;
let api: Api;
let redis: Redis;

beforeAll(async () => {
  setup = await setUpApi('api-tokens');
  api = setup.api;
  redis = new Redis(setup.redis.url);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await setup?.close();
});

interface Created {
  id: string;
  name: string;
  role: string;
  token: string;
  expiresAt?: string;
}

async function create(body: Record<string, unknown>): Promise<Created> {
  const answer = await call<Created>(api, 'POST', '/api/v1/tokens', { token: api.adminToken, body });
  expect(answer.status, answer.text).toBe(201);
  return answer.json;
}

describe('token expiry', () => {
  it('a token with expiresInMs carries expiresAt, works until then, and is refused after it with "expired"', async () => {
    const before = Date.now();
    const created = await create({ name: 'temp-person', role: 'viewer', expiresInMs: 30 * 86_400_000 });
    expect(Date.parse(created.expiresAt!) - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 1_000);
    const me = await call<Record<string, unknown>>(api, 'GET', '/api/v1/me', { token: created.token });
    expect(me.status, me.text).toBe(200);
    expect(me.json).toEqual({
      id: created.id,
      name: 'temp-person',
      role: 'viewer',
      expiresAt: created.expiresAt,
    });

    // Move the expiry into the past, as time passing would.
    const key = `${setup!.installation.prefix}:tokens`;
    const record = JSON.parse((await redis.hget(key, created.id))!) as Record<string, unknown>;
    await redis.hset(
      key,
      created.id,
      JSON.stringify({ ...record, expiresAt: new Date(Date.now() - 1_000).toISOString() }),
    );
    const refused = await call(api, 'GET', '/api/v1/plugins', { token: created.token });
    const problem = expectProblem(refused, 401);
    expect(problem.detail).toMatch(/temp-person expired at .*; ask an admin for a new one$/);
    expect(problem.detail).not.toContain('[REDACTED]');
    expect((refused.json as { code?: string }).code).toBe('TOKEN_EXPIRED');
  });

  it('an expiry outside 1 minute … 10 years is refused (400, naming the field)', async () => {
    const answer = await call(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      body: { name: 'too-short', role: 'viewer', expiresInMs: 10 },
    });
    expect(expectProblem(answer, 400).detail).toMatch(/expiresInMs/);
  });
});

describe('last used', () => {
  it('is recorded on use, listed by GET /tokens, and not rewritten within a minute', async () => {
    const created = await create({ name: 'busy-person', role: 'viewer' });
    const listed = async () =>
      (
        await call<{ id: string; lastUsedAt?: string }[]>(api, 'GET', '/api/v1/tokens', {
          token: api.adminToken,
        })
      ).json.find((token) => token.id === created.id)!;
    expect((await listed()).lastUsedAt).toBeUndefined();
    expect((await call(api, 'GET', '/api/v1/plugins', { token: created.token })).status).toBe(200);
    const first = (await listed()).lastUsedAt;
    expect(first).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call(api, 'GET', '/api/v1/plugins', { token: created.token })).status).toBe(200);
    expect((await listed()).lastUsedAt).toBe(first);
    // A minute later (the stored time moved back) the next use writes again.
    await redis.hset(
      `${setup!.installation.prefix}:tokens:last-used`,
      created.id,
      new Date(Date.now() - 61_000).toISOString(),
    );
    expect((await call(api, 'GET', '/api/v1/plugins', { token: created.token })).status).toBe(200);
    expect(Date.parse((await listed()).lastUsedAt!)).toBeGreaterThan(Date.parse(first!));
  });

  it('revoking removes the last-used entry with the token', async () => {
    const created = await create({ name: 'leaving-person', role: 'viewer' });
    await call(api, 'GET', '/api/v1/plugins', { token: created.token });
    expect(
      (await call(api, 'DELETE', `/api/v1/tokens/${created.id}`, { token: api.adminToken })).status,
    ).toBe(200);
    expect(await redis.hexists(`${setup!.installation.prefix}:tokens:last-used`, created.id)).toBe(0);
    expectProblem(await call(api, 'GET', '/api/v1/plugins', { token: created.token }), 401);
  });
});

describe('403 names the role needed', () => {
  it('a viewer trusting a plugin: 403, detail and requiredRole name admin', async () => {
    const viewer = await create({ name: 'just-looking', role: 'viewer' });
    const answer = await call(api, 'POST', '/api/v1/plugins/fixture-inspector/trust', {
      token: viewer.token,
      body: { fingerprint: 'a'.repeat(64) },
    });
    const problem = expectProblem(answer, 403);
    expect(problem.detail).toMatch(/needs the admin role/);
    expect(answer.json).toMatchObject({ code: 'FORBIDDEN', requiredRole: 'admin' });
  });
});

describe('401 details say what to do, unredacted', () => {
  it('no token, or a header that is not a bearer token: the detail names the header, its value and the api-token file', async () => {
    const headerSets: Record<string, string>[] = [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
    ];
    for (const headers of headerSets) {
      const answer = await call(api, 'GET', '/api/v1/me', { headers });
      const problem = expectProblem(answer, 401);
      expect(problem.detail, answer.text).toBe(
        'no bearer token was sent; send the header "Authorization" with the value "Bearer", a space and your token ' +
          '(the first admin token is in the file <data-dir>/api-token)',
      );
      expect(answer.json).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('an unknown token: the detail says to check it or ask an admin', async () => {
    for (const token of ['not-a-token', wrongSecretToken(api.adminToken)]) {
      const answer = await call(api, 'GET', '/api/v1/me', { token });
      const problem = expectProblem(answer, 401);
      expect(problem.detail, answer.text).toBe(
        'unknown or revoked token; check that the whole token was sent, or ask an admin for a new one',
      );
    }
  });
});
