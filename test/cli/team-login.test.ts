// Team mode's sign-in end to end (test/support/team.ts sets up the api and
// the three tokens): login from a token file or stdin, a 0600 config, whoami
// naming the token, its role and where it came from; wrong, malformed and
// loosely kept tokens refused without being shown; profiles listed, switched
// and logged out of, saying which mode each command is left in.
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/core/safety/redact.js';
import { json, useTeam } from '../support/team.js';

const team = useTeam('cli-team-login');
const { as } = team;

describe('login, whoami, logout', () => {
  it('each person logs in (token file or stdin), the config is 0600, whoami names token, role and URL', async () => {
    await mkdir(join(team.home, 'viewer'), { recursive: true });
    const tokenFile = join(team.home, 'viewer', 'token');
    await writeFile(tokenFile, `${team.tokens.viewer.token}\n`, { mode: 0o600 });
    const viewer = await as('viewer', ['login', '--url', team.api.base, '--token-file', tokenFile]);
    expect(viewer.code, viewer.stderr).toBe(0);
    expect(viewer.stdout).toMatch(/logged in to .* as viewer-person \(viewer\)/);
    for (const role of ['operator', 'admin'] as const) {
      const run = await as(role, ['login', '--url', team.api.base, '--token-stdin'], {
        input: team.tokens[role].token,
      });
      expect(run.code, run.stderr).toBe(0);
    }
    const config = join(team.home, 'admin', 'config', 'switchyard', 'config.json');
    expect((await stat(config)).mode & 0o777).toBe(0o600);
    const whoami = json<Record<string, string>>(await as('operator', ['--json', 'whoami']));
    expect(whoami).toMatchObject({
      mode: 'remote',
      name: 'operator-person',
      role: 'operator',
      url: team.api.base,
    });
    expect((await as('admin', ['whoami'])).stdout).toMatch(
      /admin-person \(admin\) at http:\/\/127\.0\.0\.1:\d+/,
    );
  });

  it('a wrong token is refused at login (exit 4) and nothing is saved', async () => {
    const unknown = `sy_${'a1'.repeat(6)}_${'B2c'.repeat(14)}x`;
    const run = await as('stranger', ['login', '--url', team.api.base, '--token-stdin'], { input: unknown });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/unknown or revoked token/);
    await expect(stat(join(team.home, 'stranger', 'config', 'switchyard', 'config.json'))).rejects.toThrow();
    // Not a token's shape at all: refused before anything is sent (exit 2), without quoting it.
    const malformed = await as('stranger', ['login', '--url', team.api.base, '--token-stdin'], {
      input: 'sy_nope',
    });
    expect(malformed.code, malformed.stderr).toBe(2);
    expect(malformed.stderr).toMatch(/does not hold a Switchyard API token/);
    expect(malformed.stderr).not.toContain('sy_nope');
    await expect(stat(join(team.home, 'stranger', 'config', 'switchyard', 'config.json'))).rejects.toThrow();
  });

  it('token create > tok writes only the token; login --token-file tok refuses a file others can read, then works; the first line is the token; no message shows the token', async () => {
    const created = await as('admin', ['token', 'create', '--name', 'eve', '--role', 'operator']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^sy_[a-z0-9]{12}_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toMatch(/it is not shown again/);
    const token = created.stdout.trim();
    const secret = token.slice(16);
    await mkdir(join(team.home, 'eve'), { recursive: true });
    // As a shell redirect makes it: mode 0644 under the usual umask.
    const tok = join(team.home, 'eve', 'tok');
    await writeFile(tok, created.stdout, { mode: 0o644 });
    await chmod(tok, 0o644);
    const loose = await as('eve', ['login', '--url', team.api.base, '--token-file', tok]);
    expect(loose.code, loose.stderr).toBe(2);
    expect(loose.stderr).toContain(`chmod 600 ${tok}`);
    expect(loose.stdout + loose.stderr).not.toContain(secret);
    await chmod(tok, 0o600);
    const login = await as('eve', ['login', '--url', team.api.base, '--token-file', tok]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(/as eve \(operator\)/);
    expect(login.stdout + login.stderr).not.toContain(secret);

    // The file as the old `token create` wrote it: the token and its note. The
    // first line, trimmed, is the token; what follows is ignored.
    const both = join(team.home, 'eve', 'both');
    await writeFile(both, `  ${token} \r\n(token x, operator; it is not shown again)\n`, { mode: 0o600 });
    const twoLines = await as('eve', ['login', '--url', team.api.base, '--token-file', both]);
    expect(twoLines.code, twoLines.stderr).toBe(0);
    expect(twoLines.stdout).toMatch(/as eve \(operator\)/);
    expect(twoLines.stdout + twoLines.stderr).not.toContain(secret);
    const piped = await as('eve', ['login', '--url', team.api.base, '--token-stdin'], {
      input: `${token}\nsecond line\n`,
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(secret);

    // The token on the second line only: the first line is checked, and not quoted.
    const second = join(team.home, 'eve', 'second');
    await writeFile(second, `token for eve:\n${token}\n`, { mode: 0o600 });
    const notFirst = await as('eve', ['login', '--url', team.api.base, '--token-file', second]);
    expect(notFirst.code, notFirst.stderr).toBe(2);
    expect(notFirst.stderr).toMatch(/does not hold a Switchyard API token on its first line/);
    expect(notFirst.stderr).not.toMatch(/cannot reach/);
    expect(notFirst.stdout + notFirst.stderr).not.toContain('token for eve');
    expect(notFirst.stdout + notFirst.stderr).not.toContain(secret);

    // Standard input is bounded as a file is (4 KiB), with a clear message.
    const flood = await as('eve', ['login', '--url', team.api.base, '--token-stdin'], {
      input: `${token}\n${'x'.repeat(8_192)}`,
    });
    expect(flood.code, flood.stderr).toBe(2);
    expect(flood.stderr).toMatch(/standard input is larger than a token \(4 KiB\)/);
    expect(flood.stdout + flood.stderr).not.toContain(secret);

    // The token given as the path by mistake: the file is not found, the path not printed.
    const asPath = await as('eve', ['login', '--url', team.api.base, '--token-file', token]);
    expect(asPath.code, asPath.stderr).toBe(2);
    expect(asPath.stderr).toMatch(/cannot open the token file \[REDACTED\]: no such file/);
    expect(asPath.stdout + asPath.stderr).not.toContain(secret);

    // A token with a line break from the environment: refused, never printed.
    const env = await as('nobody', ['--url', team.api.base, 'whoami'], {
      env: { SWITCHYARD_TOKEN: `${token}\n(token x)` },
    });
    expect(env.code, env.stderr).toBe(2);
    expect(env.stdout + env.stderr).not.toContain(secret);
    expect(env.stderr).not.toMatch(/cannot reach/);
  });

  it('no token at all: exit 4 saying how to log in; --json gives an error document', async () => {
    const run = await as('nobody', ['--url', team.api.base, '--json', 'plugin', 'list']);
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout)).toEqual({
      error: { code: 'UNAUTHENTICATED', message: expect.stringMatching(/no token .*switchyard login/) },
    });
  });

  it('--token on the command line works but warns that it lands in shell history', async () => {
    const run = await as('nobody', [
      '--url',
      team.api.base,
      '--token',
      team.tokens.viewer.token,
      'plugin',
      'list',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/shell history/);
    // The host's own warning must not read as a secret to the redactor.
    expect(redact(run.stderr)).toBe(run.stderr);
  });

  it('whoami names where the token came from: --token, SWITCHYARD_TOKEN (over the profile) or the profile', async () => {
    const [flag, env, profile] = await Promise.all([
      as('nobody', ['--url', team.api.base, '--token', team.tokens.viewer.token, 'whoami']),
      as('admin', ['whoami'], { env: { SWITCHYARD_TOKEN: team.tokens.viewer.token } }),
      as('admin', ['--json', 'whoami']),
    ]);
    expect(flag.stdout).toMatch(/^viewer-person \(viewer\) at \S+ \[--token\]/);
    expect(env.stdout).toMatch(/^viewer-person \(viewer\) at \S+ \[SWITCHYARD_TOKEN\]/);
    expect(json(profile)).toMatchObject({ name: 'admin-person', tokenSource: 'profile default' });
  });

  it('a config file others can read is refused, naming chmod 600', async () => {
    await as('loose', ['login', '--url', team.api.base, '--token-stdin'], {
      input: team.tokens.viewer.token,
    });
    const config = join(team.home, 'loose', 'config', 'switchyard', 'config.json');
    await chmod(config, 0o644);
    const run = await as('loose', ['plugin', 'list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`chmod 600 ${config}`);
    await chmod(config, 0o600);
    const logout = await as('loose', ['logout']);
    expect(logout.stdout).toMatch(/profile default removed/);
    // Without a profile the CLI is local again (and finds no Redis: exit 2, not a token refusal).
    expect((await as('loose', ['plugin', 'list'])).code).toBe(2);
  });

  it('profile list marks the current profile; profile use switches; logout says the mode it leaves you in', async () => {
    await as('multi', ['login', '--url', team.api.base, '--token-stdin', '--profile', 'work'], {
      input: team.tokens.admin.token,
    });
    await as('multi', ['login', '--url', team.api.base, '--token-stdin', '--profile', 'watch'], {
      input: team.tokens.viewer.token,
    });
    const before = await as('multi', ['profile', 'list']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/^\s+work\s+\S+\s+admin-person \(admin\)\s+ok\s+auto$/m);
    expect(before.stdout).toMatch(/^\s+watch\s+\S+\s+viewer-person \(viewer\)\s+ok\s+auto$/m);
    const unknown = await as('multi', ['profile', 'use', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no profile "nope" \(profile list shows them\)/);
    const used = await as('multi', ['profile', 'use', 'watch']);
    expect(used.code, used.stderr).toBe(0);
    expect((await as('multi', ['profile', 'list'])).stdout).toMatch(/^\*\s+watch\s/m);
    expect((await as('multi', ['whoami'])).stdout).toMatch(/^viewer-person \(viewer\)/);
    expect(
      json<Array<{ name: string; current: boolean }>>(await as('multi', ['--json', 'profile', 'list'])),
    ).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'watch', current: true }),
        expect.objectContaining({ name: 'work', current: false }),
      ]),
    );
    const logout = await as('multi', ['logout']);
    expect(logout.stdout).toMatch(
      /logged out: profile watch removed\nnow in local mode \(Redis directly, as admin\)/,
    );
  });

  it('--remote and a profile with mode remote never fall back to local mode, even after logout', async () => {
    const bare = await as('strict', ['--remote', 'whoami']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--remote: no API to talk to/);
    const unreachable = await as('strict', ['--remote', '--url', 'http://127.0.0.1:9', 'plugin', 'list'], {
      env: { SWITCHYARD_TOKEN: team.tokens.viewer.token },
    });
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.stderr).toContain('http://127.0.0.1:9');
    const login = await as('strict', ['--remote', 'login', '--url', team.api.base, '--token-stdin'], {
      input: team.tokens.viewer.token,
    });
    expect(login.code, login.stderr).toBe(0);
    expect((await as('strict', ['profile', 'list'])).stdout).toMatch(
      /^\*\s+default\s+\S+\s+viewer-person \(viewer\)\s+ok\s+remote$/m,
    );
    const logout = await as('strict', ['logout']);
    expect(logout.stdout).toMatch(/now in remote mode: \S+ \(profile default\); no token/);
    const who = await as('strict', ['whoami']);
    expect(who.code).toBe(4);
    expect(who.stdout).not.toMatch(/admin/);
    expect(who.stderr).toMatch(/no token for http/);
  });
});

describe('logout --profile of a remote-only profile that is not the current one', () => {
  it('says that commands naming the profile stay remote (asking for a login), and what the others do', async () => {
    const login = await as(
      'named',
      ['--remote', 'login', '--url', team.api.base, '--token-stdin', '--profile', 'admin'],
      {
        input: team.tokens.admin.token,
      },
    );
    expect(login.code, login.stderr).toBe(0);
    const logout = await as('named', ['logout', '--profile', 'admin']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toBe(
      [
        'logged out: profile admin forgot its token (it stays, remote-only, without one)',
        `with --profile admin: now in remote mode: ${team.api.base} (profile admin); no token: switchyard login --url ${team.api.base} --token-stdin --profile admin`,
        'without --profile: now in local mode (Redis directly, as admin); use --remote or a profile with mode remote to refuse that',
        '',
      ].join('\n'),
    );
    expect((await as('named', ['profile', 'list'])).stdout).toMatch(
      /^\s+admin\s+\S+\s+\(logged out\)\s+logged out\s+remote$/m,
    );
    const who = await as('named', ['--profile', 'admin', 'whoami']);
    expect(who.code).toBe(4);
    expect(who.stderr).toMatch(/no token for http/);
    const asJson = json<Record<string, unknown>>(
      await as('named', ['--json', 'logout', '--profile', 'admin']),
    );
    expect(asJson).toEqual({
      profile: 'admin',
      removed: true,
      kept: true,
      mode: 'remote',
      url: team.api.base,
      withoutProfile: { mode: 'local' },
    });
  });
});
