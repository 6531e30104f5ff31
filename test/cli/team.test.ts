// Team mode end to end: an api with its own Redis; the CLI under test gets no
// Redis URL and no data dir, only `login` with a viewer, an operator and an
// admin token. The viewer reads and is refused a trust (exit 4, naming admin);
// the operator inspects, runs and cancels, and is refused an enable; the admin
// does the README journey remotely; the audit names each token. Then the
// remote and local outputs of the same commands are compared.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_SCOPES,
  CLI,
  PLUGIN_ID,
  call,
  globalArgs,
  setUpApi,
  spawnCli,
  startWorker,
  type Api,
  type ApiSetup,
} from '../api/support.js';
import { redact } from '../../src/core/safety/redact.js';
import { installQueuePlugin } from '../support/workers.js';
import { sleep, waitFor } from '../support/wait.js';

const RELATIVE_TIME = /\b(\d+(ms|s|m|h|d|y) ago|just now|in \d+(ms|s|m|h|d|y))\b/g;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let setup: ApiSetup | undefined;
let api: Api;
let home = '';
let projectsDir = '';
const tokens: Record<'viewer' | 'operator' | 'admin', { name: string; token: string }> = {} as never;

/** A team member's environment: own HOME and config, no SWITCHYARD_* and no Redis. */
function envOf(who: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: join(home, who),
    XDG_CONFIG_HOME: join(home, who, 'config'),
    XDG_DATA_HOME: join(home, who, 'no-data-here'),
    NO_COLOR: '1',
    COLUMNS: '200',
    ...extra,
  };
}

/** The CLI as a team member runs it, to its end. */
function as(who: string, args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const env = envOf(who, options.env);
  return new Promise<Run>((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(options.input ?? '');
  });
}

const running: ChildProcess[] = [];

/** The CLI as a team member runs it, started (a follow that a signal ends): what it printed so far. */
function startAs(who: string, args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: envOf(who),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const ended = new Promise<Run>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), ...output })),
  );
  return { child, output, ended };
}

/** Whether process `pid` holds an established TCP connection to 127.0.0.1:`port` (Linux /proc). */
async function connectedTo(pid: number, port: number): Promise<boolean> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match) inodes.add(match[1]!);
  }
  const table = await readFile('/proc/net/tcp', 'utf8');
  const remote = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some((fields) => fields[2] === remote && fields[3] === '01' && inodes.has(fields[9]!));
}

function json<T>(run: Run): T {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

beforeAll(async () => {
  setup = await setUpApi('cli-team', async (root) => {
    for (const name of ['shop', 'blog']) await mkdir(join(root, 'projects', name), { recursive: true });
  });
  api = setup.api;
  projectsDir = join(setup.root, 'projects');
  home = await mkdtemp(join(tmpdir(), 'switchyard-team-homes-'));
  await startWorker(setup.installation);
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    const created = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      token: api.adminToken,
      body: { name: `${role}-person`, role },
    });
    expect(created.status, created.text).toBe(201);
    tokens[role] = { name: `${role}-person`, token: created.json.token };
  }
}, 90_000);

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await setup?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('login, whoami, logout', () => {
  it('each person logs in (token file or stdin), the config is 0600, whoami names token, role and URL', async () => {
    await mkdir(join(home, 'viewer'), { recursive: true });
    const tokenFile = join(home, 'viewer', 'token');
    await writeFile(tokenFile, `${tokens.viewer.token}\n`, { mode: 0o600 });
    const viewer = await as('viewer', ['login', '--url', api.base, '--token-file', tokenFile]);
    expect(viewer.code, viewer.stderr).toBe(0);
    expect(viewer.stdout).toMatch(/logged in to .* as viewer-person \(viewer\)/);
    for (const role of ['operator', 'admin'] as const) {
      const run = await as(role, ['login', '--url', api.base, '--token-stdin'], {
        input: tokens[role].token,
      });
      expect(run.code, run.stderr).toBe(0);
    }
    const config = join(home, 'admin', 'config', 'switchyard', 'config.json');
    expect((await stat(config)).mode & 0o777).toBe(0o600);
    const whoami = json<Record<string, string>>(await as('operator', ['--json', 'whoami']));
    expect(whoami).toMatchObject({
      mode: 'remote',
      name: 'operator-person',
      role: 'operator',
      url: api.base,
    });
    expect((await as('admin', ['whoami'])).stdout).toMatch(
      /admin-person \(admin\) at http:\/\/127\.0\.0\.1:\d+/,
    );
  });

  it('a wrong token is refused at login (exit 4) and nothing is saved', async () => {
    const unknown = `sy_${'a1'.repeat(6)}_${'B2c'.repeat(14)}x`;
    const run = await as('stranger', ['login', '--url', api.base, '--token-stdin'], { input: unknown });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/unknown or revoked token/);
    await expect(stat(join(home, 'stranger', 'config', 'switchyard', 'config.json'))).rejects.toThrow();
    // Not a token's shape at all: refused before anything is sent (exit 2), without quoting it.
    const malformed = await as('stranger', ['login', '--url', api.base, '--token-stdin'], {
      input: 'sy_nope',
    });
    expect(malformed.code, malformed.stderr).toBe(2);
    expect(malformed.stderr).toMatch(/does not hold a Switchyard API token/);
    expect(malformed.stderr).not.toContain('sy_nope');
    await expect(stat(join(home, 'stranger', 'config', 'switchyard', 'config.json'))).rejects.toThrow();
  });

  it('token create > tok writes only the token; login --token-file tok refuses a file others can read, then works; the first line is the token; no message shows the token', async () => {
    const created = await as('admin', ['token', 'create', '--name', 'eve', '--role', 'operator']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^sy_[a-z0-9]{12}_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toMatch(/it is not shown again/);
    const token = created.stdout.trim();
    const secret = token.slice(16);
    await mkdir(join(home, 'eve'), { recursive: true });
    // As a shell redirect makes it: mode 0644 under the usual umask.
    const tok = join(home, 'eve', 'tok');
    await writeFile(tok, created.stdout, { mode: 0o644 });
    await chmod(tok, 0o644);
    const loose = await as('eve', ['login', '--url', api.base, '--token-file', tok]);
    expect(loose.code, loose.stderr).toBe(2);
    expect(loose.stderr).toContain(`chmod 600 ${tok}`);
    expect(loose.stdout + loose.stderr).not.toContain(secret);
    await chmod(tok, 0o600);
    const login = await as('eve', ['login', '--url', api.base, '--token-file', tok]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(/as eve \(operator\)/);
    expect(login.stdout + login.stderr).not.toContain(secret);

    // The file as the old `token create` wrote it: the token and its note. The
    // first line, trimmed, is the token; what follows is ignored.
    const both = join(home, 'eve', 'both');
    await writeFile(both, `  ${token} \r\n(token x, operator; it is not shown again)\n`, { mode: 0o600 });
    const twoLines = await as('eve', ['login', '--url', api.base, '--token-file', both]);
    expect(twoLines.code, twoLines.stderr).toBe(0);
    expect(twoLines.stdout).toMatch(/as eve \(operator\)/);
    expect(twoLines.stdout + twoLines.stderr).not.toContain(secret);
    const piped = await as('eve', ['login', '--url', api.base, '--token-stdin'], {
      input: `${token}\nsecond line\n`,
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(secret);

    // The token on the second line only: the first line is checked, and not quoted.
    const second = join(home, 'eve', 'second');
    await writeFile(second, `token for eve:\n${token}\n`, { mode: 0o600 });
    const notFirst = await as('eve', ['login', '--url', api.base, '--token-file', second]);
    expect(notFirst.code, notFirst.stderr).toBe(2);
    expect(notFirst.stderr).toMatch(/does not hold a Switchyard API token on its first line/);
    expect(notFirst.stderr).not.toMatch(/cannot reach/);
    expect(notFirst.stdout + notFirst.stderr).not.toContain('token for eve');
    expect(notFirst.stdout + notFirst.stderr).not.toContain(secret);

    // Standard input is bounded as a file is (4 KiB), with a clear message.
    const flood = await as('eve', ['login', '--url', api.base, '--token-stdin'], {
      input: `${token}\n${'x'.repeat(8_192)}`,
    });
    expect(flood.code, flood.stderr).toBe(2);
    expect(flood.stderr).toMatch(/standard input is larger than a token \(4 KiB\)/);
    expect(flood.stdout + flood.stderr).not.toContain(secret);

    // The token given as the path by mistake: the file is not found, the path not printed.
    const asPath = await as('eve', ['login', '--url', api.base, '--token-file', token]);
    expect(asPath.code, asPath.stderr).toBe(2);
    expect(asPath.stderr).toMatch(/cannot open the token file \[REDACTED\]: no such file/);
    expect(asPath.stdout + asPath.stderr).not.toContain(secret);

    // A token with a line break from the environment: refused, never printed.
    const env = await as('nobody', ['--url', api.base, 'whoami'], {
      env: { SWITCHYARD_TOKEN: `${token}\n(token x)` },
    });
    expect(env.code, env.stderr).toBe(2);
    expect(env.stdout + env.stderr).not.toContain(secret);
    expect(env.stderr).not.toMatch(/cannot reach/);
  });

  it('no token at all: exit 4 saying how to log in; --json gives an error document', async () => {
    const run = await as('nobody', ['--url', api.base, '--json', 'plugin', 'list']);
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout)).toEqual({
      error: { code: 'UNAUTHENTICATED', message: expect.stringMatching(/no token .*switchyard login/) },
    });
  });

  it('--token on the command line works but warns that it lands in shell history', async () => {
    const run = await as('nobody', ['--url', api.base, '--token', tokens.viewer.token, 'plugin', 'list']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/shell history/);
    // The host's own warning must not read as a secret to the redactor.
    expect(redact(run.stderr)).toBe(run.stderr);
  });

  it('whoami names where the token came from: --token, SWITCHYARD_TOKEN (over the profile) or the profile', async () => {
    const [flag, env, profile] = await Promise.all([
      as('nobody', ['--url', api.base, '--token', tokens.viewer.token, 'whoami']),
      as('admin', ['whoami'], { env: { SWITCHYARD_TOKEN: tokens.viewer.token } }),
      as('admin', ['--json', 'whoami']),
    ]);
    expect(flag.stdout).toMatch(/^viewer-person \(viewer\) at \S+ \[--token\]/);
    expect(env.stdout).toMatch(/^viewer-person \(viewer\) at \S+ \[SWITCHYARD_TOKEN\]/);
    expect(json(profile)).toMatchObject({ name: 'admin-person', tokenSource: 'profile default' });
  });

  it('a config file others can read is refused, naming chmod 600', async () => {
    await as('loose', ['login', '--url', api.base, '--token-stdin'], { input: tokens.viewer.token });
    const config = join(home, 'loose', 'config', 'switchyard', 'config.json');
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
    await as('multi', ['login', '--url', api.base, '--token-stdin', '--profile', 'work'], {
      input: tokens.admin.token,
    });
    await as('multi', ['login', '--url', api.base, '--token-stdin', '--profile', 'watch'], {
      input: tokens.viewer.token,
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
      env: { SWITCHYARD_TOKEN: tokens.viewer.token },
    });
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.stderr).toContain('http://127.0.0.1:9');
    const login = await as('strict', ['--remote', 'login', '--url', api.base, '--token-stdin'], {
      input: tokens.viewer.token,
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
      ['--remote', 'login', '--url', api.base, '--token-stdin', '--profile', 'admin'],
      {
        input: tokens.admin.token,
      },
    );
    expect(login.code, login.stderr).toBe(0);
    const logout = await as('named', ['logout', '--profile', 'admin']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toBe(
      [
        'logged out: profile admin forgot its token (it stays, remote-only, without one)',
        `with --profile admin: now in remote mode: ${api.base} (profile admin); no token: switchyard login --url ${api.base} --token-stdin --profile admin`,
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
      url: api.base,
      withoutProfile: { mode: 'local' },
    });
  });
});

describe('three identities, remotely', () => {
  let fingerprint = '';

  it('admin: the README journey (refresh, show, trust, enable, scan, inspect, run, schedule, token)', async () => {
    expect((await as('admin', ['plugin', 'refresh'])).code).toBe(0);
    fingerprint = json<{ fingerprint: string }>(
      await as('admin', ['--json', 'plugin', 'show', PLUGIN_ID]),
    ).fingerprint;
    const trust = await as('admin', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint, '--yes']);
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout).toMatch(/trusted fixture-inspector/);
    const enable = await as('admin', [
      'plugin',
      'enable',
      PLUGIN_ID,
      ...ALL_SCOPES.flatMap((scope) => ['--scope', scope]),
      '--yes',
    ]);
    expect(enable.code, enable.stderr).toBe(0);
    const scanned = json<{ registered: { id: string }[]; refused: unknown[] }>(
      await as('admin', ['--json', 'project', 'scan', projectsDir, '--trust']),
    );
    expect(scanned.registered.map((project) => project.id).sort()).toEqual(['blog', 'shop']);
    expect(scanned.refused).toEqual([]);
    const batch = json<{ total: number; succeeded: number; results: unknown[] }>(
      await as('admin', ['--json', 'inspect', PLUGIN_ID, '--all']),
    );
    expect(batch).toMatchObject({ total: 2, succeeded: 2 });
    const run = json<{ state: string; result: { output: unknown } }>(
      await as('admin', [
        '--json',
        'run',
        PLUGIN_ID,
        'shop',
        'fixture.echo',
        '--input',
        '{"hello":"team"}',
        '--yes',
        '--wait',
      ]),
    );
    expect(run).toMatchObject({ state: 'succeeded', result: { output: { hello: 'team' } } });
    const schedule = await as('admin', ['schedule', 'add', PLUGIN_ID, '--all', '--cron', '0 3 * * *']);
    expect(schedule.code, schedule.stderr).toBe(0);
    expect(schedule.stdout).toMatch(/schedule sched_\w+ added/);
    const created = json<{ token: string; expiresAt: string }>(
      await as('admin', [
        '--json',
        'token',
        'create',
        '--name',
        'newcomer',
        '--role',
        'viewer',
        '--expires-in',
        '30d',
      ]),
    );
    expect(created.token).toMatch(/^sy_/);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const list = await as('admin', ['token', 'list']);
    expect(list.stdout).toMatch(/EXPIRES\s+LAST USED/);
    expect(list.stdout).toMatch(/newcomer\s+viewer.*in 30d\s+never/);
    expect(list.stdout).toMatch(/admin-person\s+admin.*never\s+(just now|\d+(ms|s) ago)/);
  }, 120_000);

  it('viewer: lists plugins, projects, batches and audit; plugin trust exits 4 naming admin', async () => {
    for (const args of [['plugin', 'list'], ['project', 'list'], ['batch', 'list'], ['audit']]) {
      const run = await as('viewer', args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    expect((await as('viewer', ['project', 'list'])).stdout).toMatch(/shop/);
    const refused = await as('viewer', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint, '--yes']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/needs the admin role; token viewer-person has viewer/);
    // Refused by role, not shown the trust prompt first.
    expect(refused.stderr).not.toMatch(/operating-system identity/);
    const refusedJson = await as('viewer', [
      '--json',
      'plugin',
      'trust',
      PLUGIN_ID,
      '--fingerprint',
      fingerprint,
      '--yes',
    ]);
    expect(refusedJson.code).toBe(4);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringMatching(/admin/) },
    });
  });

  it('viewer: trust, enable and run without --yes are refused by role (exit 4) before any --yes prompt', async () => {
    const trust = await as('viewer', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint]);
    expect(trust.code, trust.stderr).toBe(4);
    expect(trust.stderr).toMatch(/plugin trust needs the admin role; token viewer-person has viewer/);
    expect(trust.stderr).not.toMatch(/--yes|what code may run/);
    const enable = await as('viewer', ['plugin', 'enable', PLUGIN_ID, '--scope', 'project.metadata.read']);
    expect(enable.code, enable.stderr).toBe(4);
    expect(enable.stderr).toMatch(/plugin enable needs the admin role/);
    const run = await as('viewer', ['run', PLUGIN_ID, 'shop', 'fixture.echo']);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/run needs the operator role; token viewer-person has viewer/);
    expect(run.stderr).not.toMatch(/--yes/);
    // An operator is asked to confirm, told what the run does (not "what code may run").
    const unconfirmed = await as('operator', ['run', PLUGIN_ID, 'shop', 'fixture.echo']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(
      /runs the action fixture\.echo of \S+ on project shop, which may change it/,
    );
    expect(unconfirmed.stderr).not.toMatch(/what code may run/);
  });

  it('operator: an inspection batch, an operation, a cancel; plugin enable exits 4', async () => {
    const batch = json<{ succeeded: number }>(await as('operator', ['--json', 'inspect', PLUGIN_ID, 'shop']));
    expect(batch.succeeded).toBe(1);
    const run = await as('operator', [
      'run',
      PLUGIN_ID,
      'blog',
      'fixture.echo',
      '--input',
      '{"n":1}',
      '--yes',
      '--wait',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/state\s+succeeded/);
    const queued = json<{ id: string }>(
      await as('operator', [
        '--json',
        'run',
        PLUGIN_ID,
        'shop',
        'fixture.echo',
        '--yes',
        '--idempotency-key',
        'op-cancel-1',
      ]),
    );
    const cancelled = await as('operator', ['op', 'cancel', queued.id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^${queued.id}: (cancelled|succeeded)`));
    const refused = await as('operator', [
      'plugin',
      'enable',
      PLUGIN_ID,
      '--scope',
      'project.metadata.read',
      '--yes',
    ]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/needs the admin role/);
  }, 60_000);

  it('the audit names each token as the actor', async () => {
    const entries = json<{ actor: string; action: string }[]>(
      await as('viewer', ['--json', 'audit', '--limit', '200']),
    );
    const actorOf = (action: string) =>
      new Set(entries.filter((entry) => entry.action === action).map((entry) => entry.actor));
    expect(actorOf('plugin.trust')).toEqual(new Set(['token:admin-person']));
    expect(actorOf('schedule.add')).toEqual(new Set(['token:admin-person']));
    expect(actorOf('token.create')).toContain('token:admin-person');
    expect(actorOf('batch.create')).toEqual(new Set(['token:admin-person', 'token:operator-person']));
    expect(actorOf('operation.cancel')).toEqual(new Set(['token:operator-person']));
    expect(entries.some((entry) => entry.actor.startsWith('user:'))).toBe(false);
  });
});

/** The same command locally (Redis directly, as the admin on the api host does). */
const local = (args: string[]) => as('local-admin', [...globalArgs(setup!.installation), ...args]);
const remote = (args: string[]) => as('admin', args);

describe('remote and local print the same', () => {
  it('the same JSON documents, human output and exit codes', async () => {
    const batchId = json<{ batchId: string }[]>(await remote(['--json', 'batch', 'list']))[0]!.batchId;
    const opId = json<{ id: string }[]>(await remote(['--json', 'op', 'list']))[0]!.id;
    for (const args of [
      ['--json', 'plugin', 'list'],
      ['--json', 'plugin', 'show', PLUGIN_ID],
      ['--json', 'plugin', 'logs', PLUGIN_ID],
      ['--json', 'project', 'list'],
      ['--json', 'batch', 'list'],
      ['--json', 'batch', 'show', batchId],
      ['--json', 'op', 'list'],
      ['--json', 'op', 'show', opId],
      ['--json', 'schedule', 'list'],
      ['schedule', 'list'],
      ['plugin', 'list'],
      ['plugin', 'show', PLUGIN_ID],
      ['project', 'list'],
      ['--json', 'plugin', 'show', 'no-such-plugin'],
      ['plugin', 'show', 'no-such-plugin'],
      ['--json', 'op', 'show', 'op_nope'],
      ['--json', 'inspect', PLUGIN_ID],
      ['--json', 'batch', 'list', '--limit', '5000'], // the api's bound holds in both modes
      // Batch control's filters and commands (the new routes, remotely).
      ['--json', 'batch', 'list', '--state', 'succeeded', '--plugin', PLUGIN_ID, '--limit', '2'],
      ['batch', 'list', '--state', 'failed'],
      ['--json', 'op', 'list', '--plugin', PLUGIN_ID, '--state', 'succeeded'],
      ['--json', 'audit', '--action', 'plugin.', '--since', '1h', '--limit', '5'],
      ['audit', '--actor', 'token:admin-person', '--target', PLUGIN_ID],
      ['--json', 'batch', 'diff', batchId, batchId],
      ['batch', 'diff', batchId, batchId, '--exit-code'],
      ['batch', 'show', batchId, '--watch'],
      ['batch', 'cancel', batchId], // a finished batch: idempotent, nothing changes
    ]) {
      const [a, b] = [await remote(args), await local(args)];
      // Relative times ("32s ago") may tick between the two runs; everything else is the same text.
      // plugin show names the process whose containment it reports (the api, or this CLI).
      const same = (run: Run) => ({
        code: run.code,
        // (and a label holding that name pads its column differently: compare words, not padding).
        stdout: run.stdout
          .replace(RELATIVE_TIME, '<ago>')
          .replace(/\b(api|cli):[^\s:"]+:\d+/g, '<process>')
          // Each worker's confinement report carries when it was last refreshed.
          .replace(/"at": "[^"]+"/g, '"at": "<when>"')
          .replace(/ +/g, ' '),
      });
      expect(same(a), args.join(' ')).toEqual(same(b));
      expect(a.stderr.replace(/^warning.*\n/, ''), args.join(' ')).toBe(b.stderr);
    }
    // Writes: the same documents, ids, actors and names aside (a derived name is numbered when taken).
    const strip = ({ id: _id, name, createdAt: _at, createdBy: _by, ...rest }: Record<string, unknown>) => ({
      ...rest,
      name: String(name).replace(/-\d+$/, ''),
    });
    const add = ['--json', 'schedule', 'add', PLUGIN_ID, 'shop', '--every', '1h'];
    expect(strip(json(await remote(add)))).toEqual(strip(json(await local(add))));
    const disable = ['--json', 'plugin', 'disable', PLUGIN_ID];
    expect(json(await remote(disable))).toEqual(json(await local(disable)));
    const limits = ['--json', 'plugin', 'set', PLUGIN_ID, '--operate-timeout', '2h'];
    expect(json<{ timeLimits: unknown }>(await remote(limits)).timeLimits).toEqual(
      json<{ timeLimits: unknown }>(await local(limits)).timeLimits,
    );
    const opLogs = ['--json', 'op', 'logs', opId];
    expect(json(await remote(opLogs))).toEqual(json(await local(opLogs)));
    // A finished operation: the follow prints its stderr and ends at once, as `op wait` does.
    for (const args of [
      ['op', 'logs', opId, '--follow'],
      ['--json', 'op', 'wait', opId],
    ]) {
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, `${args.join(' ')}: ${a.stderr}`).toBe(b.code);
      expect(a.stdout.replace(RELATIVE_TIME, '<ago>'), args.join(' ')).toBe(
        b.stdout.replace(RELATIVE_TIME, '<ago>'),
      );
    }
    // An unknown id: the same refusal (exit 2, the same message) from a follow, a wait and an export.
    for (const args of [
      ['op', 'logs', 'op_nope', '--follow'],
      ['--json', 'op', 'wait', 'op_nope'],
      ['plugin', 'logs', 'no-such-plugin', '--follow'],
      ['plugin', 'logs', PLUGIN_ID, '--follow', '--operation', 'op_nope'],
      ['batch', 'show', 'batch_nope', '--watch'],
      ['--json', 'batch', 'export', 'batch_nope', '--format', 'csv'],
    ]) {
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, `${args.join(' ')}: ${a.stderr}`).toBe(2);
      expect([a.code, a.stdout, a.stderr], args.join(' ')).toEqual([b.code, b.stdout, b.stderr]);
      expect(a.stderr, args.join(' ')).toMatch(/unknown/);
    }
    // An export streams the api's body: byte for byte what local mode prints.
    for (const format of ['jsonl', 'csv']) {
      const args = ['batch', 'export', batchId, '--format', format];
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      expect(a.stdout, format).toBe(b.stdout);
      expect(a.stdout, format).toContain(batchId);
    }
    const badCron = ['--json', 'schedule', 'add', PLUGIN_ID, '--all', '--cron', 'not a cron'];
    const [a, b] = [await remote(badCron), await local(badCron)];
    expect([a.code, a.stdout]).toEqual([b.code, b.stdout]);
    expect(a.code).toBe(2);
  }, 300_000);
});

describe('remote follows and waits, live', () => {
  const QUEUE = 'queue-plugin';
  let packageDir = '';

  /** An operation whose call writes `tick <n> <action>` to stderr every 200 ms for `ms`; its id. */
  const startTicking = async (action: string, ms: number) =>
    json<{ id: string }>(
      await remote([
        '--json',
        'run',
        QUEUE,
        'shop',
        action,
        '--input',
        JSON.stringify({ sleepMs: ms, stderrEveryMs: 200 }),
        '--yes',
      ]),
    ).id;

  beforeAll(async () => {
    packageDir = await installQueuePlugin(setup!.installation.dataDir);
    expect((await remote(['plugin', 'refresh'])).code).toBe(0);
    const { fingerprint } = json<{ fingerprint: string }>(await remote(['--json', 'plugin', 'show', QUEUE]));
    const trusted = await remote(['plugin', 'trust', QUEUE, '--fingerprint', fingerprint, '--yes']);
    expect(trusted.code, trusted.stderr).toBe(0);
    // The fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
    const policy = await remote([
      'plugin',
      'set',
      QUEUE,
      '--allow-write',
      packageDir,
      '--allow-read',
      '/proc',
    ]);
    expect(policy.code, policy.stderr).toBe(0);
    const scopes = ALL_SCOPES.flatMap((scope) => ['--scope', scope]);
    const enabled = await remote(['plugin', 'enable', QUEUE, ...scopes, '--yes']);
    expect(enabled.code, enabled.stderr).toBe(0);
  }, 60_000);

  it('op logs --follow prints the stderr as the call writes it and ends (exit 0) when the operation ends', async () => {
    // Long enough that a CLI started under load still sees it running.
    const id = await startTicking('ticking', 8_000);
    const follow = startAs('admin', ['op', 'logs', id, '--follow']);
    await waitFor(
      'the remote follow to print a tick',
      async () => follow.output.stdout.includes('tick 1 ticking'),
      20_000,
    );
    // Printed while the call still ran.
    expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('running');
    const followed = await follow.ended;
    expect(followed.code, followed.stderr).toBe(0);
    expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('succeeded');
    // Every entry the operation has, each once, as `op logs` prints them afterwards.
    const after = await local(['op', 'logs', id]);
    // The relative time is right-aligned: its padding changes with its length.
    const timeless = (text: string) =>
      text.replace(/ +(?=\d+(ms|s|m|h|d|y) ago|just now)/g, ' ').replace(RELATIVE_TIME, '<ago>');
    expect(timeless(followed.stdout)).toBe(timeless(after.stdout));
    expect(followed.stdout.match(/tick \d+ ticking/g)!.length).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('plugin logs --follow prints an entry written after it started; SIGINT ends it as it ends a local one', async () => {
    const first = await startTicking('before', 300);
    expect((await remote(['op', 'wait', first])).code).toBe(0);
    const followers = [
      startAs('admin', ['plugin', 'logs', QUEUE, '--follow', '--limit', '1']),
      startAs('local-admin', [
        ...globalArgs(setup!.installation),
        'plugin',
        'logs',
        QUEUE,
        '--follow',
        '--limit',
        '1',
      ]),
    ];
    // Each printed the newest entry: it follows now.
    for (const follower of followers)
      await waitFor('a follow to start', async () => follower.output.stdout !== '', 20_000);
    const id = await startTicking('after', 1_000);
    for (const follower of followers)
      await waitFor(
        'a follow to print a new entry',
        async () => follower.output.stdout.includes('tick 2 after'),
        20_000,
      );
    for (const follower of followers) follower.child.kill('SIGINT');
    const [a, b] = await Promise.all(followers.map((follower) => follower.ended));
    expect([a!.code, a!.stderr]).toEqual([b!.code, b!.stderr]);
    expect(a!.code).toBe(0);
    expect((await remote(['op', 'wait', id])).code).toBe(0);
  }, 60_000);

  it('op wait, inspect --wait and batch show --watch: the JSON of local mode', async () => {
    // Both modes wait for the same operation at the same time.
    const id = await startTicking('waited', 1_500);
    const [a, b] = await Promise.all([
      remote(['--json', 'op', 'wait', id]),
      local(['--json', 'op', 'wait', id]),
    ]);
    expect(json<{ state: string }>(a)).toMatchObject({ state: 'succeeded' });
    expect(json(a)).toEqual(json(b));
    // Inspections that take a second each.
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '1000');
    try {
      const batchId = json<{ batchId: string }>(
        await remote(['--json', 'inspect', QUEUE, 'shop', 'blog', '--no-wait']),
      ).batchId;
      const watch = ['--json', 'batch', 'show', batchId, '--watch'];
      const [c, d] = await Promise.all([remote(watch), local(watch)]);
      expect(json<{ state: string }>(c)).toMatchObject({ state: 'succeeded', succeeded: 2 });
      expect(json(c)).toEqual(json(d));
      // A new batch each: the same document but for ids, times and who asked.
      const inspect = ['--json', 'inspect', QUEUE, 'shop', 'blog'];
      const [e, f] = await Promise.all([remote(inspect), local(inspect)]);
      const comparable = (run: Run) => {
        const {
          batchId: _id,
          createdAt: _at,
          createdBy: _by,
          finishedAt: _end,
          results,
          ...rest
        } = json<Record<string, unknown> & { results: { result?: { observedAt?: string } }[] }>(run);
        return {
          ...rest,
          results: results.map(({ result, ...outcome }) => ({
            ...outcome,
            result: { ...result, observedAt: '<at>' },
          })),
        };
      };
      expect(comparable(e)).toEqual(comparable(f));
      expect(comparable(e)).toMatchObject({ state: 'succeeded', succeeded: 2 });
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 90_000);

  it('Ctrl-C on a remote inspect stops following (exit 130); the batch keeps running, as locally', async () => {
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '3000');
    try {
      const inspectCalls = async () =>
        (await readFile(join(packageDir, 'calls.log'), 'utf8').catch(() => ''))
          .split('\n')
          .filter((line) => line.startsWith('project.inspect ')).length;
      const before = await inspectCalls();
      const inspect = startAs('admin', ['inspect', QUEUE, 'shop', 'blog']);
      // An inspection runs: the batch was created and the CLI follows it (it does so at once).
      await waitFor('an inspection to start', async () => (await inspectCalls()) > before, 20_000);
      inspect.child.kill('SIGINT');
      const stopped = await inspect.ended;
      expect(stopped.code, stopped.stderr).toBe(130);
      const batchId = /^stopped following; batch (\S+) keeps running \(\d of 2 done, 0 failed\)$/m.exec(
        stopped.stderr,
      )?.[1];
      expect(batchId, stopped.stderr).toBeDefined();
      expect(stopped.stderr).toContain(`switchyard batch show ${batchId} --watch`);
      expect(json<{ state: string }>(await remote(['--json', 'batch', 'show', batchId!])).state).toBe(
        'running',
      );
      expect((await remote(['batch', 'cancel', batchId!])).code).toBe(0);
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 60_000);

  it('Ctrl-C on op wait, remote and local: exit 130 naming op wait and op cancel; --json: INTERRUPTED with the operationId', async () => {
    const id = await startTicking('interrupted', 30_000);
    try {
      const redisPort = Number(new URL(setup!.installation.redisUrl).port);
      const localArgs = globalArgs(setup!.installation);
      const waits = [
        { port: api.port, wait: startAs('admin', ['op', 'wait', id]) },
        { port: api.port, wait: startAs('admin', ['--json', 'op', 'wait', id]) },
        { port: redisPort, wait: startAs('local-admin', [...localArgs, 'op', 'wait', id]) },
        { port: redisPort, wait: startAs('local-admin', [...localArgs, '--json', 'op', 'wait', id]) },
      ];
      for (const { port, wait } of waits)
        await waitFor('the wait to connect', () => connectedTo(wait.child.pid!, port), 20_000);
      await sleep(1_000); // its first read answered: it waits for the end now
      for (const { wait } of waits) wait.child.kill('SIGINT');
      const [remoteHuman, remoteJson, localHuman, localJson] = await Promise.all(
        waits.map(({ wait }) => wait.ended),
      );
      for (const human of [remoteHuman!, localHuman!]) {
        expect(human.code, human.stderr).toBe(130);
        expect(human.stdout).toBe('');
        expect(human.stderr).toMatch(
          new RegExp(`^stopped waiting; operation ${id} keeps going \\(running\\)$`, 'm'),
        );
        expect(human.stderr).toContain(`switchyard op wait ${id}`);
        expect(human.stderr).toContain(`switchyard op cancel ${id}`);
      }
      expect(remoteHuman!.stderr).toBe(localHuman!.stderr);
      for (const document of [remoteJson!, localJson!]) {
        expect(document.code, document.stderr).toBe(130);
        expect(JSON.parse(document.stdout)).toEqual({
          error: {
            code: 'INTERRUPTED',
            message: expect.stringContaining(`op cancel ${id}`),
            operationId: id,
          },
        });
      }
      expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('running');
    } finally {
      await remote(['op', 'cancel', id]);
    }
  }, 60_000);

  it('op cancel of a running operation prints how it ended (cancelled), remote and local, not `running`', async () => {
    const running = async (action: string) => {
      const id = await startTicking(action, 30_000);
      await waitFor(
        `${action} to run`,
        async () => json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state === 'running',
        30_000,
      );
      return id;
    };
    const viaApiId = await running('cancel-remote');
    const viaApi = await remote(['op', 'cancel', viaApiId]);
    expect(viaApi.code, viaApi.stderr).toBe(0);
    expect(viaApi.stdout).toBe(`${viaApiId}: cancelled\n`);
    const viaRedisId = await running('cancel-local');
    const viaRedis = await local(['--json', 'op', 'cancel', viaRedisId]);
    expect(json<{ id: string; state: string }>(viaRedis)).toMatchObject({
      id: viaRedisId,
      state: 'cancelled',
    });
    // Cancelling again: the same end, at once.
    const again = await remote(['--json', 'op', 'cancel', viaRedisId]);
    expect(json(again)).toEqual(json(viaRedis));
  }, 90_000);

  it('with every event stream of its token taken (429), a remote op wait still ends, reading the operation instead', async () => {
    const id = await startTicking('crowded', 2_500);
    const held = new AbortController();
    try {
      const opened: Response[] = [];
      for (;;) {
        const response = await fetch(`${api.base}/api/v1/operations/${id}/events`, {
          headers: { authorization: `Bearer ${tokens.admin.token}` },
          signal: held.signal,
        });
        if (response.status !== 200) {
          expect(response.status, await response.text()).toBe(429);
          break;
        }
        opened.push(response);
      }
      expect(opened.length).toBeGreaterThan(0);
      const waited = await remote(['--json', 'op', 'wait', id]);
      expect(waited.code, waited.stderr).toBe(0);
      expect(json(waited)).toEqual(json(await local(['--json', 'op', 'show', id])));
      expect(json<{ state: string }>(waited).state).toBe('succeeded');
    } finally {
      held.abort();
    }
  }, 60_000);

  it('a remote op wait outlives an api restart: it connects again and prints how the operation ended', async () => {
    const id = await startTicking('restarted', 4_000);
    const wait = startAs('admin', ['--json', 'op', 'wait', id]);
    await waitFor('the wait to connect to the api', () => connectedTo(wait.child.pid!, api.port), 20_000);
    await sleep(300); // its first read (GET /operations/:id) answered: it streams the events now
    // A crash (a graceful stop would let the stream end with the operation first), then the same address again.
    api.proc.child.kill('SIGKILL');
    await api.proc.exited;
    const again = spawnCli([...globalArgs(setup!.installation), 'api', '--port', String(api.port)]);
    await waitFor(
      'the api to answer again',
      async () => {
        if (!again.running()) throw new Error(`the api exited:\n${again.output()}`);
        // Any answer (503 too: no scheduler runs here) means it listens.
        return (await fetch(`${api.base}/healthz`).catch(() => undefined)) !== undefined;
      },
      30_000,
      200,
    );
    api.proc = again;
    const waited = await wait.ended;
    expect(waited.code, waited.stderr).toBe(0);
    expect(json<{ state: string }>(waited)).toMatchObject({ id, state: 'succeeded' });
    expect(json(waited)).toEqual(json(await local(['--json', 'op', 'show', id])));
  }, 90_000);
});
