// docs/CLI.md: "When work is queued and no worker is consuming the queue, the
// command says so instead of waiting in silence." No worker ever runs for
// this installation's prefix.
import { mkdir, mkdtemp, rm, cp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { completion } from '../support/cli-process.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  globalArgs,
  requireBuiltCli,
  reviewAndEnable,
  spawnCli,
  stopAll,
  stopProcess,
  waitFor,
  type Installation,
} from './support.js';

// The command waits a moment before it looks (docs/CLI.md does not say how long);
// a user should hear about it within about 5 s. Generous for a busy machine.
const WARNING_WITHIN_MS = 8_000;
const NO_WORKER = /no worker is consuming/i;

let redis: OwnedRedis;
let root: string;
let installation: Installation;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-no-worker-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', 'fixture-inspector'), { recursive: true });
  await mkdir(join(root, 'projects', 'shop'), { recursive: true });
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-no-worker') };
  const cli = cliOn(installation);
  const [, scanned] = await Promise.all([
    reviewAndEnable(installation, 'fixture-inspector', [
      'project.metadata.read',
      'project.files.read',
      'project.operate',
    ]),
    cli(['project', 'scan', join(root, 'projects'), '--trust']),
  ]);
  expect(scanned.code, scanned.stderr).toBe(0);
});

afterEach(async () => {
  await stopAll();
});

afterAll(async () => {
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Starts the command and waits for the warning on stderr; then stops the command. */
async function warningOf(args: string[]) {
  const begin = performance.now();
  const child = spawnCli([...globalArgs(installation), ...args]);
  try {
    await waitFor(
      () => NO_WORKER.test(child.output.stderr),
      WARNING_WITHIN_MS,
      'the no-worker warning on stderr',
      () => child.exitCode !== null,
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}\nexit: ${child.exitCode}\nstdout:\n${child.output.stdout}\nstderr:\n${child.output.stderr}`,
      );
    });
    return {
      ms: performance.now() - begin,
      stillRunning: child.exitCode === null,
      stdout: child.output.stdout,
      stderr: child.output.stderr,
    };
  } finally {
    await stopProcess(child, 2_000);
  }
}

/** Starts the command, waits until it waits (its no-worker warning), presses Ctrl-C; what it printed. */
async function interrupted(args: string[]) {
  const child = spawnCli([...globalArgs(installation), ...args]);
  await waitFor(
    () => NO_WORKER.test(child.output.stderr),
    WARNING_WITHIN_MS,
    'the no-worker warning on stderr',
    () => child.exitCode !== null,
  );
  child.kill('SIGINT');
  const { code } = await completion(child.proc, { timeoutMs: 10_000, closed: true });
  return { code, stdout: child.output.stdout, stderr: child.output.stderr };
}

async function queuedOperation(): Promise<string> {
  const queued = await cliOn(installation)([
    '--json',
    'run',
    'fixture-inspector',
    'shop',
    'fixture.echo',
    '--input',
    '{}',
    '--yes',
  ]);
  expect(queued.code, queued.stderr).toBe(0);
  return (JSON.parse(queued.stdout) as { id: string }).id;
}

describe('Ctrl-C while waiting: exit 130, the work goes on, and the message says how to follow or cancel it', () => {
  it('op wait names op wait and op cancel; the operation stays queued', async () => {
    const id = await queuedOperation();
    const stopped = await interrupted(['op', 'wait', id]);
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stdout).toBe('');
    expect(stopped.stderr).toMatch(
      new RegExp(`^stopped waiting; operation ${id} keeps going \\(queued\\)$`, 'm'),
    );
    expect(stopped.stderr).toContain(`switchyard op wait ${id}`);
    expect(stopped.stderr).toContain(`switchyard op cancel ${id}`);
    const cli = cliOn(installation);
    expect((JSON.parse((await cli(['--json', 'op', 'show', id])).stdout) as { state: string }).state).toBe(
      'queued',
    );
    // A queued operation has nothing to wait for once cancelled: cancel prints its end at once.
    const cancelled = await cli(['op', 'cancel', id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`${id}: cancelled\n`);
  });

  it('run --wait --json: the JSON error document INTERRUPTED names the operation', async () => {
    const stopped = await interrupted([
      '--json',
      'run',
      'fixture-inspector',
      'shop',
      'fixture.echo',
      '--input',
      '{}',
      '--yes',
      '--wait',
    ]);
    expect(stopped.code, stopped.stderr).toBe(130);
    const { error } = JSON.parse(stopped.stdout) as {
      error: { code: string; message: string; operationId: string };
    };
    expect(error).toMatchObject({ code: 'INTERRUPTED', operationId: expect.stringMatching(/^op_/) });
    expect(error.message).toContain(`switchyard op wait ${error.operationId}`);
    expect(stopped.stderr).toContain(`switchyard op cancel ${error.operationId}`);
    expect((await cliOn(installation)(['op', 'cancel', error.operationId])).code).toBe(0);
  });

  it('inspect --json: the JSON error document INTERRUPTED names the batch', async () => {
    const stopped = await interrupted(['--json', 'inspect', 'fixture-inspector', '--all']);
    expect(stopped.code, stopped.stderr).toBe(130);
    const { error } = JSON.parse(stopped.stdout) as {
      error: { code: string; message: string; batchId: string };
    };
    expect(error).toMatchObject({ code: 'INTERRUPTED', batchId: expect.stringMatching(/^batch_/) });
    expect(error.message).toContain(`switchyard batch cancel ${error.batchId}`);
    expect((await cliOn(installation)(['batch', 'cancel', error.batchId])).code).toBe(0);
  });
});

describe('with no worker running', () => {
  it('inspect --all says on stderr that no worker is consuming the queue', async () => {
    const seen = await warningOf(['inspect', 'fixture-inspector', '--all']);
    expect(seen.stillRunning).toBe(true); // it says so, and keeps waiting for the work
    expect(seen.ms).toBeLessThan(WARNING_WITHIN_MS);
    const line = seen.stderr.split('\n').find((text) => NO_WORKER.test(text))!;
    expect(line).toMatch(/switchyard worker|switchyard up/); // and how to get one
    expect(seen.stdout).not.toMatch(NO_WORKER);
  });

  it('run … --wait says so too, and keeps stdout for the one JSON document', async () => {
    const seen = await warningOf([
      '--json',
      'run',
      'fixture-inspector',
      'shop',
      'fixture.echo',
      '--input',
      '{}',
      '--yes',
      '--wait',
    ]);
    expect(seen.stillRunning).toBe(true);
    expect(seen.ms).toBeLessThan(WARNING_WITHIN_MS);
    expect(seen.stdout).toBe('');
  });
});

describe('webhook ping and redeliver without a worker', () => {
  it('queue the delivery and say on stderr that no worker is running', async () => {
    const cli = cliOn(installation);
    const secretFile = join(root, 'hook.secret');
    await writeFile(secretFile, 'no-worker-hook-secret\n');
    const added = await cli([
      '--json',
      'webhook',
      'add',
      '--url',
      'http://127.0.0.1:9/hook',
      '--events',
      'batch.finished',
      '--secret-file',
      secretFile,
    ]);
    expect(added.code, added.stderr).toBe(0);
    const ping = await cli(['webhook', 'ping', (JSON.parse(added.stdout) as { id: string }).id]);
    expect(ping.code, ping.stderr).toBe(0);
    expect(ping.stdout).toMatch(/ping queued as delivery \S+ → http:\/\/127\.0\.0\.1:9\/hook/);
    expect(ping.stderr).toMatch(/no worker is running: the delivery is sent once one starts/);
  });
});
