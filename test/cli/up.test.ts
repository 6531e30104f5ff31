// `switchyard up` on a fresh data dir with the embedded Redis (no --redis-url):
// it serves /healthz, stops everything it started on SIGTERM, refuses a second
// `up` on the same data dir naming the running pid, and takes over the stale
// lock a SIGKILLed `up` left behind.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import {
  exitWithin,
  killGroup,
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
 * line with the UI address (CLI.md: "Prints the UI address"), after which it
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

  it('takes over the stale lock of an up killed with SIGKILL', async () => {
    const firstPort = await freePort();
    const killed = await startUp(firstPort);
    const lock = join(dataDir, 'switchyard-up.lock');
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(killed.pid));

    process.kill(killed.pid!, 'SIGKILL');
    await exitWithin(killed, 5_000);
    // Its children outlive it; clean them up as a user would, the lock stays.
    killGroup(killed, 'SIGKILL');
    killMentioning(dataDir);
    await waitFor(() => leftovers().length === 0, 5_000, 'the killed up’s children to die');
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(killed.pid));

    const port = await freePort();
    const next = await startUp(port);
    expect(await healthz(port)).toBe(200);
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(next.pid));

    process.kill(next.pid!, 'SIGTERM');
    const [code, signal] = await exitWithin(next, 15_000);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(leftovers()).toEqual([]);
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
