// Authentication and roles of /api/v1 against a real `switchyard api` process:
// the route × credential matrix (written to test-artifacts/auth-matrix.md from
// the observed statuses), revocation, the api-token file, token storage in
// Redis, and the audit actor of a trust.
import { stat, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import {
  PLUGIN_ID,
  TOKEN_FORMAT,
  call,
  expectProblem,
  globalArgs,
  runCli,
  setUpApi,
  wrongSecretToken,
  type Api,
  type ApiSetup,
  type Installation,
} from './support.js';

type Credential = 'none' | 'malformed' | 'wrong' | 'viewer' | 'operator' | 'admin';
const CREDENTIALS: Credential[] = ['none', 'malformed', 'wrong', 'viewer', 'operator', 'admin'];
const ROLE_RANK = { viewer: 0, operator: 1, admin: 2 } as const;
type Role = keyof typeof ROLE_RANK;

let setup: ApiSetup | undefined;
let installation: Installation;
let api: Api;
let fingerprint = '';
const tokens: Partial<Record<Role, string>> = {};
/** Every token secret this file saw, to look for in Redis. */
const secrets: string[] = [];

beforeAll(async () => {
  setup = await setUpApi('api-auth');
  ({ installation, api } = setup);
  secrets.push(api.adminToken);

  // viewer through the CLI, operator and admin through POST /api/v1/tokens.
  const viewer = await runCli([
    ...globalArgs(installation),
    '--json',
    'token',
    'create',
    '--name',
    'matrix-viewer',
    '--role',
    'viewer',
  ]);
  expect(viewer.code, viewer.output).toBe(0);
  tokens.viewer = (JSON.parse(viewer.output.trim()) as { token: string }).token;
  for (const role of ['operator', 'admin'] as const) {
    const created = await call<{ id: string; name: string; role: string; token: string }>(
      api,
      'POST',
      '/api/v1/tokens',
      { token: api.adminToken, body: { name: `matrix-${role}`, role } },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ id: expect.any(String), name: `matrix-${role}`, role });
    tokens[role] = created.json.token;
  }
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    expect(tokens[role]).toMatch(TOKEN_FORMAT);
    secrets.push(tokens[role]!);
  }

  const refreshed = await call(api, 'POST', '/api/v1/plugins/refresh', { token: api.adminToken, body: {} });
  expect(refreshed.status, refreshed.text).toBe(200);
  const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, {
    token: api.adminToken,
  });
  expect(shown.status, shown.text).toBe(200);
  fingerprint = shown.json.fingerprint;
  expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
});

afterAll(async () => {
  await setup?.close();
});

interface RouteCase {
  label: string;
  method: string;
  path: string;
  needs: Role;
  body?: () => unknown;
}

let tokenSerial = 0;
const ROUTES: RouteCase[] = [
  { label: 'GET /api/v1/plugins', method: 'GET', path: '/api/v1/plugins', needs: 'viewer' },
  { label: 'GET /api/v1/audit', method: 'GET', path: '/api/v1/audit', needs: 'viewer' },
  {
    label: 'GET /api/v1/batches/resolve',
    method: 'GET',
    path: '/api/v1/batches/resolve?ref=latest',
    needs: 'viewer',
  },
  {
    label: 'GET /api/v1/operations/resolve',
    method: 'GET',
    path: '/api/v1/operations/resolve?ref=latest',
    needs: 'viewer',
  },
  {
    label: 'GET /api/v1/projects/:id/actions',
    method: 'GET',
    path: `/api/v1/projects/no-such-project/actions?plugin=${PLUGIN_ID}`,
    needs: 'viewer',
  },
  {
    label: 'POST /api/v1/batches',
    method: 'POST',
    path: '/api/v1/batches',
    needs: 'operator',
    body: () => ({ pluginId: PLUGIN_ID, projects: 'all' }),
  },
  {
    label: 'POST /api/v1/operations',
    method: 'POST',
    path: '/api/v1/operations',
    needs: 'operator',
    body: () => ({ pluginId: PLUGIN_ID, projectId: 'no-such-project', action: 'fixture.echo' }),
  },
  {
    label: 'POST /api/v1/operations/:id/cancel',
    method: 'POST',
    path: '/api/v1/operations/no-such-operation/cancel',
    needs: 'operator',
    body: () => ({}),
  },
  {
    label: 'POST /api/v1/plugins/refresh',
    method: 'POST',
    path: '/api/v1/plugins/refresh',
    needs: 'admin',
    body: () => ({}),
  },
  {
    label: 'POST /api/v1/plugins/:id/trust',
    method: 'POST',
    path: `/api/v1/plugins/${PLUGIN_ID}/trust`,
    needs: 'admin',
    body: () => ({ fingerprint }),
  },
  {
    label: 'POST /api/v1/tokens',
    method: 'POST',
    path: '/api/v1/tokens',
    needs: 'admin',
    body: () => ({ name: `matrix-made-${++tokenSerial}`, role: 'viewer' }),
  },
  { label: 'GET /api/v1/webhooks', method: 'GET', path: '/api/v1/webhooks', needs: 'admin' },
  {
    label: 'POST /api/v1/webhooks',
    method: 'POST',
    path: '/api/v1/webhooks',
    needs: 'admin',
    body: () => ({ url: 'http://127.0.0.1:9/hook', events: ['batch.finished'], secret: 'matrix-secret' }),
  },
];

function tokenFor(credential: Credential): string | undefined {
  switch (credential) {
    case 'none':
      return undefined;
    case 'malformed':
      return 'not-a-switchyard-token';
    case 'wrong':
      return wrongSecretToken(tokens.admin!);
    default:
      return tokens[credential]!;
  }
}

const observed = new Map<string, Record<Credential, number>>();

async function writeMatrix(): Promise<void> {
  const lines = [
    '# HTTP API auth matrix',
    '',
    'Observed by `test/api/auth.test.ts` against a real `switchyard api` process (real HTTP). ' +
      '`malformed` is not of the form `sy_<id>_<secret>`; `wrong` is the admin token id with another secret. ' +
      `Node ${process.version}, ${new Date().toISOString()}.`,
    '',
    `| route | needs | ${CREDENTIALS.join(' | ')} |`,
    `|---|---|${CREDENTIALS.map(() => '---').join('|')}|`,
    ...ROUTES.filter((route) => observed.has(route.label)).map(
      (route) =>
        `| \`${route.label}\` | ${route.needs} | ${CREDENTIALS.map((c) => observed.get(route.label)![c]).join(' | ')} |`,
    ),
    '',
  ];
  await mkdir(join(REPO, 'test-artifacts'), { recursive: true });
  await writeFile(join(REPO, 'test-artifacts', 'auth-matrix.md'), lines.join('\n'));
}

describe('the auth matrix: route × credential', () => {
  afterAll(writeMatrix);

  for (const route of ROUTES) {
    it(`${route.label} (needs ${route.needs})`, async () => {
      const row = {} as Record<Credential, number>;
      observed.set(route.label, row);
      for (const credential of CREDENTIALS) {
        const token = tokenFor(credential);
        const answer = await call(api, route.method, route.path, {
          ...(token !== undefined ? { token } : {}),
          ...(route.body ? { body: route.body() } : {}),
        });
        row[credential] = answer.status;
        const context = `${route.label} with ${credential}: ${answer.status} ${answer.text}`;
        if (credential === 'none' || credential === 'malformed' || credential === 'wrong') {
          expectProblem(answer, 401);
          expect(answer.headers.get('www-authenticate'), context).toMatch(/^Bearer\b/);
        } else if (ROLE_RANK[credential] < ROLE_RANK[route.needs]) {
          expectProblem(answer, 403);
        } else {
          expect([401, 403], context).not.toContain(answer.status);
          expect(answer.status, context).toBeLessThan(500);
        }
      }
    });
  }
});

describe('tokens', () => {
  it('a revoked token is refused with 401 at once', async () => {
    const created = await call<{ id: string; token: string }>(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      body: { name: 'to-revoke', role: 'viewer' },
    });
    expect(created.status, created.text).toBe(201);
    secrets.push(created.json.token);
    expect((await call(api, 'GET', '/api/v1/plugins', { token: created.json.token })).status).toBe(200);

    const revoked = await call(api, 'DELETE', `/api/v1/tokens/${created.json.id}`, { token: api.adminToken });
    expect(revoked.status, revoked.text).toBe(200);
    // The removed token's view (as `token list` shows it), never its secret.
    expect(revoked.json).toMatchObject({
      id: created.json.id,
      name: 'to-revoke',
      role: 'viewer',
      createdAt: expect.any(String),
      createdBy: expect.any(String),
      revoked: true,
    });
    expect(Object.keys(revoked.json as object)).not.toContain('token');
    expect(revoked.text).not.toContain(created.json.token);

    const after = await call(api, 'GET', '/api/v1/plugins', { token: created.json.token });
    expectProblem(after, 401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    // By name, as `token revoke <name>` does: the same view, then a 404 naming it.
    const named = await call<{ id: string; token: string }>(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      body: { name: 'by-name', role: 'viewer' },
    });
    secrets.push(named.json.token);
    const byName = await call(api, 'DELETE', '/api/v1/tokens/by-name', { token: api.adminToken });
    expect(byName.json).toMatchObject({ id: named.json.id, name: 'by-name', revoked: true });
    const again = await call(api, 'DELETE', '/api/v1/tokens/by-name', { token: api.adminToken });
    expect(expectProblem(again, 404).detail).toBe('unknown token "by-name" (token list shows them)');
    const listed = await call<{ id: string }[]>(api, 'GET', '/api/v1/tokens', { token: api.adminToken });
    expect(listed.json.map((token) => token.id)).not.toContain(created.json.id);
  });

  it('the first admin token is written to <data-dir>/api-token with mode 0600', async () => {
    const info = await stat(join(installation.dataDir, 'api-token'));
    expect(info.mode & 0o777).toBe(0o600);
    expect(api.adminToken).toMatch(TOKEN_FORMAT);
    expect((await call(api, 'GET', '/api/v1/tokens', { token: api.adminToken })).status).toBe(200);
  });

  it('no token (nor its secret) is stored in clear in Redis', async () => {
    const client = new Redis(installation.redisUrl);
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await client.scan(cursor, 'MATCH', `${installation.prefix}:*`, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      expect(keys).toContain(`${installation.prefix}:tokens`);
      let dump = '';
      for (const key of keys) {
        const type = await client.type(key);
        dump += `\n${key}\n`;
        if (type === 'string') dump += (await client.getBuffer(key))?.toString('latin1') ?? '';
        else if (type === 'hash') dump += JSON.stringify(await client.hgetall(key));
        else if (type === 'list') dump += JSON.stringify(await client.lrange(key, 0, -1));
        else if (type === 'set') dump += JSON.stringify(await client.smembers(key));
        else if (type === 'zset') dump += JSON.stringify(await client.zrange(key, 0, -1, 'WITHSCORES'));
        else if (type === 'stream') dump += JSON.stringify(await client.xrange(key, '-', '+'));
      }
      expect(secrets.length).toBeGreaterThanOrEqual(5);
      for (const token of secrets) {
        const secret = token.slice('sy_'.length + 12 + 1); // the secret may itself hold '_'
        expect(secret).toHaveLength(43);
        expect(dump.includes(token), `full token found in Redis`).toBe(false);
        expect(dump.includes(secret), `token secret found in Redis`).toBe(false);
      }
    } finally {
      client.disconnect();
    }
  });

  it('the audit records token:<name> as the actor of a trust', async () => {
    const created = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      body: { name: 'reviewer-alice', role: 'admin' },
    });
    expect(created.status, created.text).toBe(201);
    secrets.push(created.json.token);
    const trusted = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/trust`, {
      token: created.json.token,
      body: { fingerprint },
    });
    expect(trusted.status, trusted.text).toBe(200);
    expect(trusted.json).toMatchObject({ id: PLUGIN_ID, trust: 'trusted', fingerprint });

    const audit = await call<{ items: { actor: string; action: string; target: string; at: string }[] }>(
      api,
      'GET',
      '/api/v1/audit?limit=100',
      { token: tokens.viewer! },
    );
    expect(audit.status, audit.text).toBe(200);
    const trusts = audit.json.items.filter(
      (entry) => entry.action === 'plugin.trust' && entry.target === PLUGIN_ID,
    );
    expect(trusts.map((entry) => entry.actor)).toContain('token:reviewer-alice');
    // The newest trust is this one.
    const newest = [...trusts].sort((a, b) => b.at.localeCompare(a.at))[0];
    expect(newest?.actor).toBe('token:reviewer-alice');
  });
});
