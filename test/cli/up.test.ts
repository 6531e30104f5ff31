// `switchyard up` on a fresh data dir with the embedded Redis (no --redis-url):
// it serves /healthz, stops everything it started on SIGTERM, refuses a second
// `up` on the same data dir naming the running pid; `up` owns its children
// (kill -9 of `up` takes api, worker, scheduler and redis-server with it) and a
// data dir never gets a second redis-server; a port another installation holds
// is an error, never reported as this one being up.
import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { freePort, startOwnedRedis } from '../support/redis.js';
import {
  CLI,
  exitWithin,
  killMentioning,
  processesMentioning,
  requireBuiltCli,
  runCli,
  spawnCli,
  stopAll,
  waitFor,
} from './support.js';

let dataDir: string;

beforeAll(async () => {
  requireBuiltCli();
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-cli-up-'));
});

afterEach(async () => {
  await stopAll();
  killMentioning(dataDir); // whatever a failed test left: redis-server, api, worker, scheduler
});

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function healthz(port: number): Promise<number | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}

function spawnUp(port: number) {
  return spawnCli(['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1']);
}

/**
 * Starts `up` on the data dir and waits for GET /healthz → 200, then for the
 * line with the UI address (docs/CLI.md: "Prints the UI address"), after which it
 * handles SIGTERM. (A SIGTERM before that: see the start-up test below.)
 */
async function startUp(port: number) {
  const up = spawnUp(port);
  const gone = () => up.exitCode !== null || up.signalCode !== null;
  try {
    await waitFor(async () => (await healthz(port)) === 200, 60_000, `GET /healthz → 200 on :${port}`, gone);
    await waitFor(() => up.output.stdout.includes(`:${port}/`), 15_000, 'the UI address on stdout', gone);
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nup stdout:\n${up.output.stdout}\nup stderr:\n${up.output.stderr}`,
    );
  }
  return up;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The redis-server processes on this data dir. */
function redisServers(): string[] {
  return processesMentioning(dataDir).filter((line) => line.includes('redis-server'));
}

/** Processes whose command line names the data dir, apart from `except`. */
function leftovers(except: number[] = []): string[] {
  return processesMentioning(dataDir).filter((line) => !except.includes(Number(line.split(/\s+/)[0])));
}

describe('switchyard up', () => {
  it('serves /healthz, refuses a second up on the same data dir, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const up = await startUp(port);
    const children = leftovers([up.pid!]);
    // Its own processes: the embedded redis-server on the data dir's socket, api, worker, scheduler.
    expect(
      children.some((line) => line.includes('redis-server')),
      children.join('\n'),
    ).toBe(true);
    for (const role of ['api', 'worker', 'scheduler'])
      expect(
        children.some((line) => new RegExp(`main\\.js .* ${role}( |$)`).test(line)),
        `${role} in:\n${children.join('\n')}`,
      ).toBe(true);

    const second = await runCli([
      '--data-dir',
      dataDir,
      'up',
      '--port',
      String(await freePort()),
      '--workers',
      '1',
    ]);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`pid ${up.pid}`);
    expect(second.stderr).not.toMatch(/^\s{4}at /m);
    expect(await healthz(port)).toBe(200); // the first one is untouched

    process.kill(up.pid!, 'SIGTERM');
    const [code, signal] = await exitWithin(up, 15_000);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    await waitFor(() => leftovers().length === 0, 1_000, 'no process left').catch(() => undefined);
    expect(leftovers()).toEqual([]);
    expect(await healthz(port)).toBeUndefined();
  });

  // A terminal's Ctrl-C signals the whole foreground group. The embedded redis-server sits in a group
  // of its own, so `up` stops it after its workers closed; in up's group it would stop at once and the
  // workers would close against no Redis (sitting out their deadline).
  it('Ctrl-C to the whole group: the workers close before the embedded redis-server stops', async () => {
    const port = await freePort();
    const up = await startUp(port);
    const pidOf = (pattern: RegExp) => {
      const line = leftovers([up.pid!]).find((entry) => pattern.test(entry));
      expect(line, leftovers().join('\n')).toBeDefined();
      return Number(line!.trim().split(/\s+/)[0]);
    };
    const worker = pidOf(/main\.js .* worker( |$)/);
    const redis = pidOf(/redis-server/);
    const goneAt = new Map<number, number>();
    const watch = setInterval(() => {
      for (const pid of [worker, redis])
        if (!goneAt.has(pid) && !alive(pid)) goneAt.set(pid, performance.now());
    }, 5);
    try {
      process.kill(-up.pid!, 'SIGINT');
      const [code, signal] = await exitWithin(up, 15_000);
      expect({ code, signal }, up.output.stderr).toEqual({ code: 0, signal: null });
      await waitFor(() => goneAt.size === 2, 5_000, 'the worker and the redis-server to be gone');
    } finally {
      clearInterval(watch);
    }
    expect(goneAt.get(redis)!).toBeGreaterThan(goneAt.get(worker)!);
    expect(leftovers()).toEqual([]);
  });

  it('kill -9 of up: its api, worker, scheduler and redis-server die with it; the next up runs exactly one Redis', async () => {
    const firstPort = await freePort();
    const killed = await startUp(firstPort);
    const lock = join(dataDir, 'switchyard-up.lock');
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(killed.pid));
    const children = leftovers([killed.pid!]);
    const pids = children.map((line) => Number(line.split(/\s+/)[0]));
    expect(
      children.some((line) => line.includes('redis-server')),
      children.join('\n'),
    ).toBe(true);
    expect(pids.length, children.join('\n')).toBe(4); // redis-server, api, worker, scheduler

    process.kill(killed.pid!, 'SIGKILL');
    await exitWithin(killed, 5_000);
    // No clean-up by hand: every child notices by itself (checked by pid).
    await waitFor(() => pids.every((pid) => !alive(pid)), 10_000, 'the killed up’s children to die').catch(
      () => undefined,
    );
    expect(pids.filter(alive), `alive after kill -9 of up:\n${leftovers().join('\n')}`).toEqual([]);
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(killed.pid)); // a stale lock

    const port = await freePort();
    const next = await startUp(port);
    expect(await healthz(port)).toBe(200);
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(next.pid));
    expect(redisServers(), leftovers().join('\n')).toHaveLength(1);

    process.kill(next.pid!, 'SIGTERM');
    const [code, signal] = await exitWithin(next, 15_000);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(leftovers()).toEqual([]);
  });

  it('a redis-server of the data dir that outlived its up is stopped, never doubled', async () => {
    // What an up without util-linux (no parent-death signal) leaves after kill -9:
    // the data dir's server still running on its socket, not a child of anyone here.
    const orphan = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--unixsocket',
        join(dataDir, 'redis', 'redis.sock'),
        '--dir',
        join(dataDir, 'redis'),
        '--appendonly',
        'yes',
        '--pidfile',
        join(dataDir, 'redis', 'redis.pid'),
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore', detached: true },
    );
    orphan.unref();
    try {
      await waitFor(() => redisServers().length === 1, 10_000, 'the orphaned redis-server');
      await waitFor(
        async () => (await readFile(join(dataDir, 'redis', 'redis.pid'), 'utf8').catch(() => '')) !== '',
        10_000,
        'its pidfile',
      );
      const port = await freePort();
      const up = await startUp(port);
      expect(alive(orphan.pid!), 'the orphaned redis-server was stopped').toBe(false);
      expect(redisServers(), leftovers().join('\n')).toHaveLength(1);
      expect(await healthz(port)).toBe(200);
      process.kill(up.pid!, 'SIGTERM');
      await exitWithin(up, 15_000);
      expect(leftovers()).toEqual([]);
    } finally {
      if (alive(orphan.pid!)) process.kill(orphan.pid!, 'SIGKILL');
    }
  });

  it('a SIGTERM while it is starting stops what it started and leaves no process', async () => {
    const port = await freePort();
    const up = spawnUp(port);
    // Start-up is under way once the embedded redis-server runs.
    await waitFor(
      () => leftovers([up.pid!]).some((line) => line.includes('redis-server')),
      30_000,
      'the embedded redis-server',
      () => up.exitCode !== null,
    );
    process.kill(up.pid!, 'SIGTERM');
    await exitWithin(up, 15_000);
    await waitFor(() => leftovers().length === 0, 2_000, 'no process left').catch(() => undefined);
    expect(leftovers(), 'processes left behind by an up stopped during start-up').toEqual([]);
  });
});

describe('switchyard up on a port someone else holds', () => {
  it('fails fast naming the port, and leaves no process behind', async () => {
    const { createServer } = await import('node:net');
    // Accepts connections and never answers: the worst case for a health probe.
    const squatter = createServer(() => {});
    const port = await freePort();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const result = await runCli(
        ['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1'],
        30_000,
      );
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(processesMentioning(dataDir)).toEqual([]);
    } finally {
      squatter.close();
    }
  });
});

describe('switchyard up on a port another installation holds', () => {
  it('exits non-zero and never reports the other installation as its own', async () => {
    // Anything answering /healthz 200 there, as another Switchyard would.
    const other = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status":"ok","redis":"ok"}');
    });
    const port = await freePort();
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
    try {
      const result = await runCli(
        ['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1'],
        30_000,
      );
      expect(result.stdout).not.toContain('Switchyard is up');
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(result.stderr).toContain('another Switchyard');
      expect(processesMentioning(dataDir)).toEqual([]);
    } finally {
      other.close();
    }
  });

  it('a second up (another data dir) on the port of a running up fails and leaves the first alone', async () => {
    const port = await freePort();
    const first = await startUp(port);
    const otherDir = await mkdtemp(join(tmpdir(), 'switchyard-cli-up-other-'));
    try {
      await mkdir(otherDir, { recursive: true });
      const second = await runCli(['--data-dir', otherDir, 'up', '--port', String(port), '--workers', '1']);
      expect(second.stdout).not.toContain('Switchyard is up');
      expect(second.code, second.stderr).toBe(2);
      expect(processesMentioning(otherDir)).toEqual([]);
      expect(await healthz(port)).toBe(200);
    } finally {
      killMentioning(otherDir);
      await rm(otherDir, { recursive: true, force: true });
      process.kill(first.pid!, 'SIGTERM');
      await exitWithin(first, 15_000);
    }
  });
});

/** `pid` and every process below it, from /proc. */
function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let index = 0; index < tree.length; index += 1) {
    for (const [child, parent] of parents) if (parent === tree[index]) tree.push(child);
  }
  return tree;
}

describe('switchyard up with a Redis that needs a password', () => {
  it('no process it starts has the password on its command line, and its banner masks it', async () => {
    const redis = await startOwnedRedis();
    const password = 'up-redis-Pw-73915';
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'requirepass', password);
    } finally {
      admin.disconnect();
    }
    const url = redis.url.replace('redis://', `redis://:${password}@`);
    const port = await freePort();
    const up = spawnCli(['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1'], {
      SWITCHYARD_REDIS_URL: url,
    });
    try {
      const gone = () => up.exitCode !== null || up.signalCode !== null;
      await waitFor(() => up.output.stdout.includes('Switchyard is up'), 60_000, 'the banner', gone).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n${up.output.stdout}\n${up.output.stderr}`);
        },
      );
      expect(await healthz(port)).toBe(200);
      const tree = processTree(up.pid!);
      const commandLines = tree.map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        } catch {
          return '';
        }
      });
      // up, api, worker, scheduler (and whatever they start)
      expect(commandLines.filter((line) => line.includes('main.js')).length, commandLines.join('\n')).toBe(4);
      expect(commandLines.filter((line) => line.includes(password))).toEqual([]);
      expect(up.output.stdout).not.toContain(password);
      expect(up.output.stdout).toContain('Switchyard is up');
      expect(up.output.stderr).not.toContain(password);
    } finally {
      process.kill(up.pid!, 'SIGTERM');
      await exitWithin(up, 15_000);
      await redis.stop();
    }
  });
});

describe('switchyard up on a terminal', () => {
  /** `up` under a pseudo-terminal (script(1)) until its banner; what the terminal showed. */
  async function upOnTerminal(extra: string[]): Promise<string> {
    const port = await freePort();
    const command = [
      process.execPath,
      CLI,
      '--data-dir',
      dataDir,
      'up',
      '--port',
      String(port),
      '--workers',
      '1',
      ...extra,
    ]
      .map((word) => `'${word}'`)
      .join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    try {
      const gone = () => child.exitCode !== null;
      await waitFor(
        () => seen.includes('Switchyard is up'),
        60_000,
        'the banner on the terminal',
        gone,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${seen}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // maintenance runs at start
      return seen;
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve),
      );
      await waitFor(() => leftovers().length === 0, 20_000, 'every process of up to end');
    }
  }

  it('logs only warnings on a terminal, and says where the admin token is; --log-level info shows the rest', async () => {
    const quiet = await upOnTerminal([]);
    expect(quiet).not.toMatch(/INFO/);
    expect(quiet).toContain(`The web UI signs in with the admin token in ${join(dataDir, 'api-token')}`);
    const chatty = await upOnTerminal(['--log-level', 'info']);
    expect(chatty).toMatch(/INFO/);
  }, 150_000);
});
