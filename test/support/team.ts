// Team mode's set-up, shared by the test/cli/team-*.test.ts files: an api with
// its own Redis and a worker, the projects shop and blog on disk (not yet
// registered), and a viewer, an operator and an admin token. The CLI under
// test runs as a team member: own HOME and config, no SWITCHYARD_* and no
// Redis URL, so it only works through `login`. `local` runs a command as the
// admin on the api host does (Redis directly), to compare the two modes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { CLI, call, globalArgs, setUpApi, startWorker, type Api, type ApiSetup } from '../api/support.js';

/** Relative times ("32s ago") that may tick between two runs of the same command. */
export const RELATIVE_TIME = /\b(\d+(ms|s|m|h|d|y) ago|just now|in \d+(ms|s|m|h|d|y))\b/g;

export type Role = 'viewer' | 'operator' | 'admin';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  ended: Promise<Run>;
}

export interface Team {
  readonly setup: ApiSetup;
  readonly api: Api;
  /** Where each team member's HOME is: <home>/<who>. */
  readonly home: string;
  /** Holds the projects shop and blog. */
  readonly projectsDir: string;
  /** One token per role, named `<role>-person`. */
  readonly tokens: Record<Role, { name: string; token: string }>;
  /** The CLI as team member `who` runs it, to its end. */
  as(who: string, args: string[], options?: { input?: string; env?: Record<string, string> }): Promise<Run>;
  /** The CLI as `who` runs it, started (a follow that a signal ends): what it printed so far. */
  startAs(who: string, args: string[]): Started;
  /** The admin's command through the api (after `logIn('admin')`). */
  remote(args: string[]): Promise<Run>;
  /** The same command locally (Redis directly, as the admin on the api host does). */
  local(args: string[]): Promise<Run>;
  /** Logs each role's person in through stdin, on the default profile. */
  logIn(...roles: Role[]): Promise<void>;
}

/** The run's stdout as JSON, after checking it exited 0. */
export function json<T>(run: Run): T {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** Whether process `pid` holds an established TCP connection to 127.0.0.1:`port` (Linux /proc). */
export async function connectedTo(pid: number, port: number): Promise<boolean> {
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

/** The team's installation for this test file, set up before its tests and closed after them. */
export function useTeam(name: string): Team {
  let setup: ApiSetup | undefined;
  let home = '';
  const tokens = {} as Record<Role, { name: string; token: string }>;
  const running: ChildProcess[] = [];
  const ready = () => {
    if (!setup) throw new Error('the team is not set up yet');
    return setup;
  };

  /** A team member's environment: own HOME and config, no SWITCHYARD_* and no Redis. */
  const envOf = (who: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: join(home, who),
    XDG_CONFIG_HOME: join(home, who, 'config'),
    XDG_DATA_HOME: join(home, who, 'no-data-here'),
    NO_COLOR: '1',
    COLUMNS: '200',
    ...extra,
  });

  const as: Team['as'] = (who, args, options = {}) => {
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
  };

  const startAs: Team['startAs'] = (who, args) => {
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
  };

  beforeAll(async () => {
    setup = await setUpApi(name, async (root) => {
      for (const project of ['shop', 'blog'])
        await mkdir(join(root, 'projects', project), { recursive: true });
    });
    home = await mkdtemp(join(tmpdir(), 'switchyard-team-homes-'));
    await startWorker(setup.installation);
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const created = await call<{ token: string }>(setup.api, 'POST', '/api/v1/tokens', {
        token: setup.api.adminToken,
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

  return {
    get setup() {
      return ready();
    },
    get api() {
      return ready().api;
    },
    get home() {
      ready();
      return home;
    },
    get projectsDir() {
      return join(ready().root, 'projects');
    },
    tokens,
    as,
    startAs,
    remote: (args) => as('admin', args),
    local: (args) => as('local-admin', [...globalArgs(ready().installation), ...args]),
    async logIn(...roles) {
      for (const role of roles) {
        const run = await as(role, ['login', '--url', ready().api.base, '--token-stdin'], {
          input: tokens[role].token,
        });
        expect(run.code, run.stderr).toBe(0);
      }
    },
  };
}
