// docs/CLI.md: "When work is queued and no worker is consuming the queue, the
// command says so instead of waiting in silence." No worker ever runs for
// this installation's prefix.
import { mkdir, mkdtemp, rm, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
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
