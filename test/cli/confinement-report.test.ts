// What each worker host enforces, as a reviewer reads it (PROTOCOL §11):
// real `switchyard worker` processes report their confinement; `plugin show`
// lists it per worker, with what is missing; under
// SWITCHYARD_CONFINEMENT=off a worker says what it lacks, and one started with
// --require-confinement refuses to run plugins, naming it.
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFINEMENT_ENV, containment } from '../../src/core/supervision/containment.js';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import {
  cliOn,
  exitWithin,
  globalArgs,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  spawnCli,
  stopAll,
  stopProcess,
  type Installation,
} from './support.js';

const ID = 'fixture-inspector';
type WorkerReport = { worker: string; enforced: string[]; missing: string[]; required: boolean };

let redis: OwnedRedis;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;

const reports = async () =>
  onlyJson<{ containment: { workers: WorkerReport[] } }>(await cli(['--json', 'plugin', 'show', ID]))
    .containment.workers;

function worker(extra: string[], env: Record<string, string> = {}) {
  return spawnCli([...globalArgs(installation), 'worker', '--concurrency', '1', ...extra], env);
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const root = await mkdtemp(join(tmpdir(), 'switchyard-confinement-report-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', ID), { recursive: true });
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('confinement-report') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, ID, ['project.metadata.read']);
}, 60_000);

afterAll(async () => {
  await stopAll();
  await redis?.stop();
});

describe('confinement as each worker host reports it', () => {
  it(`${CONFINEMENT_ENV}=off: --require-confinement refuses to start, naming what is missing`, async () => {
    const refused = worker(['--require-confinement'], { [CONFINEMENT_ENV]: 'off' });
    const [code] = await exitWithin(refused, 15_000);
    expect(code).toBe(1);
    expect(refused.output.stderr).toMatch(
      /--require-confinement: this worker cannot confine plugin calls fully and runs none; missing: kernel confinement \(SWITCHYARD_CONFINEMENT=off\)/,
    );
    expect(await reports()).toEqual([]);
  });

  it(`${CONFINEMENT_ENV}=off: plugin show names the worker and what it does not enforce`, async () => {
    const off = worker([], { [CONFINEMENT_ENV]: 'off' });
    const [report] = await waitFor('the worker’s report', async () => {
      const found = await reports();
      return found.length === 1 ? found : undefined;
    });
    expect(report!.required).toBe(false);
    expect(report!.missing.join('\n')).toMatch(/kernel confinement \(SWITCHYARD_CONFINEMENT=off\)/);
    const shown = await cli(['plugin', 'show', ID]);
    expect(shown.stdout).toContain(`worker ${report!.worker}:`);
    expect(shown.stdout).toMatch(/NOT enforced: kernel confinement \(SWITCHYARD_CONFINEMENT=off\)/);
    await stopProcess(off);
  });

  it('confinement on: --require-confinement runs exactly when this host enforces everything', async () => {
    const here = containment();
    const required = worker(['--require-confinement']);
    if (here.missing.length > 0) {
      // A host that lacks a mechanism: the worker refuses, naming it.
      const [code] = await exitWithin(required, 15_000);
      expect(code).toBe(1);
      expect(required.output.stderr).toContain(here.missing[0]!);
      return;
    }
    const report = await waitFor('the required worker’s report', async () =>
      (await reports()).find((entry) => entry.required),
    );
    expect(report.missing).toEqual([]);
    for (const mechanism of [/^signal scoping/, /^file access rules/, /^network rules/, /^resource limits/])
      expect(
        report.enforced.some((item) => mechanism.test(item)),
        String(mechanism),
      ).toBe(true);
    const shown = await cli(['plugin', 'show', ID]);
    expect(shown.stdout).toContain(`worker ${report.worker} (--require-confinement):`);
    expect(shown.stdout).toContain('not enforced: nothing');
    // A worker that enforces what this host does is not given the same block again.
    expect(shown.stdout).toContain(`worker ${report.worker} (--require-confinement): the same as above`);
    expect(shown.stdout.split('not enforced: nothing').length - 1, shown.stdout).toBe(1);
    expect(shown.stdout).not.toContain('\\x0a');
    // It runs plugins: a health check through the queue-less path still works, and the worker stays up.
    expect(required.exitCode).toBeNull();
    await stopProcess(required);
  });
});
