// `profile list` asks each profile's API whether its token still works: a
// revoked or expired token, or an API out of reach, is said so in the list
// rather than shown as it was when `login` saw it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, call, setUpApi, type ApiSetup } from '../api/support.js';

let setup: ApiSetup | undefined;
let home = '';

function profileCli(args: string[], input = '') {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), NO_COLOR: '1' },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

async function createToken(name: string): Promise<{ id: string; token: string }> {
  const created = await call<{ id: string; token: string }>(setup!.api, 'POST', '/api/v1/tokens', {
    token: setup!.api.adminToken,
    body: { name, role: 'viewer' },
  });
  expect(created.status, created.text).toBe(201);
  return created.json;
}

beforeAll(async () => {
  setup = await setUpApi('cli-profile-status');
  home = await mkdtemp(join(tmpdir(), 'switchyard-profile-status-'));
}, 90_000);

afterAll(async () => {
  await setup?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('profile list', () => {
  it('says which profile tokens work, are revoked or expired, and which API cannot be reached', async () => {
    const { api, installation } = setup!;
    const tokens = {
      fine: await createToken('fine-person'),
      revoked: await createToken('revoked-person'),
      expired: await createToken('expired-person'),
    };
    for (const [profile, { token }] of Object.entries(tokens)) {
      const login = await profileCli(
        ['login', '--url', api.base, '--token-stdin', '--profile', profile],
        token,
      );
      expect(login.code, login.stderr).toBe(0);
    }
    const away = await profileCli(
      ['login', '--url', api.base, '--token-stdin', '--profile', 'away'],
      (await createToken('away-person')).token,
    );
    expect(away.code, away.stderr).toBe(0);

    const revoked = await call(api, 'DELETE', '/api/v1/tokens/revoked-person', { token: api.adminToken });
    expect(revoked.status, revoked.text).toBe(200);
    // A token's expiry is at least a minute away when made: its record is moved into the past.
    const redis = new Redis(installation.redisUrl);
    try {
      const key = `${installation.prefix}:tokens`;
      const record = JSON.parse((await redis.hget(key, tokens.expired.id))!) as Record<string, unknown>;
      await redis.hset(
        key,
        tokens.expired.id,
        JSON.stringify({ ...record, expiresAt: '2020-01-01T00:00:00.000Z' }),
      );
    } finally {
      redis.disconnect();
    }
    // The profile `away` now names a port nothing listens on.
    const config = join(home, 'config', 'switchyard', 'config.json');
    const saved = JSON.parse(await readFile(config, 'utf8')) as { profiles: Record<string, { url: string }> };
    saved.profiles.away!.url = 'http://127.0.0.1:9';
    await writeFile(config, JSON.stringify(saved), { mode: 0o600 });

    const listed = await profileCli(['--json', 'profile', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ name: string; token: string }>;
    expect(Object.fromEntries(rows.map((row) => [row.name, row.token]))).toEqual({
      fine: 'ok',
      revoked: 'revoked or unknown',
      expired: 'expired',
      away: 'unreachable',
    });
    const table = await profileCli(['profile', 'list']);
    expect(table.stdout).toMatch(
      /^\s+revoked\s+\S+\s+revoked-person \(viewer\)\s+revoked or unknown\s+auto$/m,
    );
    expect(table.stdout).toMatch(/^\s+fine\s+\S+\s+fine-person \(viewer\)\s+ok\s+auto$/m);
  }, 180_000);
});
