// A batch job reads the stored state its calls are checked against once for
// all its projects (job-call-state.ts) and keeps it while the call-state token
// stands. Each kind of change a call's checks depend on (PROTOCOL §9), made
// while the job's first project runs, is seen by the next project of the same
// job: untrust or disable the plugin, change its grants, untrust or remove the
// project, change the package on disk. And the per-call Redis commands that
// the cache saves are gone (INFO commandstats).
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PluginStore } from '../../src/core/plugins/plugin-store.js';
import { projectsPerJob } from '../../src/core/work/batches/inspect-jobs.js';
import type { Installation } from '../support/workers.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, readLines, startWorker, untilBatchFinished, waitFor } from '../support/workers.js';

const suite = useQueueSuite('mid-batch-changes');
const { report } = suite;

/** Enough projects that a job holds two: p00 and p01 share the batch's first job. */
const PROJECTS = 65;
const ids = Array.from({ length: PROJECTS }, (_, index) => `p${String(index).padStart(2, '0')}`);

/** The projects, registered in one scan; p00's inspection sleeps `firstSleepMs`. */
async function addProjects(installation: Installation, firstSleepMs: number): Promise<void> {
  const dir = join(installation.projectsDir, 'fleet');
  for (const id of ids) await mkdir(join(dir, id), { recursive: true });
  if (firstSleepMs > 0) await writeFile(join(dir, 'p00', 'inspect-sleep-ms'), String(firstSleepMs));
  const { registered } = await installation.runtime.projects.scan(dir, { trust: true }, ACTOR);
  expect(registered.map((project) => project.id)).toEqual(ids);
}

/**
 * Runs a batch over every project on one worker (concurrency 1), makes
 * `change` while p00's call runs (after it returned: acknowledged), then
 * returns p00's and p01's outcomes and cancels the rest of the batch.
 */
async function changeWhileFirstRuns(kind: string, change: (installation: Installation) => Promise<unknown>) {
  const installation = await suite.install(kind);
  const { runtime, packageDir } = installation;
  await addProjects(installation, 2_500);
  expect(projectsPerJob(PROJECTS)).toBe(2);
  await startWorker(installation, { concurrency: 1 });
  const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
  await waitFor(
    'p00 to be inspected',
    async () =>
      (await readLines(join(packageDir, 'calls.log'))).some((line) =>
        line.startsWith('project.inspect p00 '),
      ),
    20_000,
  );
  await change(installation);
  const [first, second] = await waitFor(
    "p01's outcome",
    async () => {
      const outcomes = await runtime.batches.store.outcomesOf(batch.batchId, ['p00', 'p01']);
      return outcomes.length === 2 ? outcomes : undefined;
    },
    20_000,
  );
  await runtime.batches.cancel(batch.batchId, ACTOR);
  await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 20_000, results: false });
  const called = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
    line.startsWith('project.inspect p01 '),
  );
  return { first: first!, second: second!, p01Called: called.length > 0, installation };
}

describe('a change made while a batch job runs is seen by its next call', () => {
  const cases: {
    kind: string;
    what: string;
    code: string;
    change: (installation: Installation) => Promise<unknown>;
  }[] = [
    {
      kind: 'untrust-plugin',
      what: 'the plugin untrusted (its stored record)',
      code: 'TRUST_REQUIRED',
      change: async ({ runtime }) => {
        const store = new PluginStore(runtime.redis, runtime.keys, ACTOR);
        try {
          await store.mutate(PLUGIN_ID, (current) => ({
            next: {
              ...current!,
              trust: 'untrusted',
              trustedFingerprint: undefined,
              enabled: false,
              grantedScopes: [],
            },
            value: undefined,
          }));
        } finally {
          await store.close();
        }
      },
    },
    {
      kind: 'disable-plugin',
      what: 'plugin disable',
      code: 'PLUGIN_DISABLED',
      change: ({ runtime }) => runtime.plugins.disable(PLUGIN_ID, ACTOR),
    },
    {
      kind: 'change-grants',
      what: 'plugin enable with project.files.read only (project.metadata.read no longer granted)',
      code: 'PERMISSION_DENIED',
      change: ({ runtime }) => runtime.plugins.enable(PLUGIN_ID, ['project.files.read'], ACTOR),
    },
    {
      kind: 'untrust-project',
      what: 'project untrust p01',
      code: 'PROJECT_UNTRUSTED',
      change: ({ runtime }) => runtime.projects.setTrusted('p01', false, ACTOR),
    },
    {
      kind: 'remove-project',
      what: 'project remove p01',
      code: 'PROJECT_NOT_FOUND',
      change: ({ runtime }) => runtime.projects.remove('p01', ACTOR),
    },
    {
      kind: 'fingerprint',
      what: "the package's executable changed on disk",
      code: 'FINGERPRINT_CHANGED',
      change: ({ packageDir }) => appendFile(join(packageDir, 'queue-plugin.mjs'), '\n// changed\n'),
    },
  ];

  for (const { kind, what, code, change } of cases) {
    it(`${what}: p01, next in p00's job, fails ${code} without being called`, async () => {
      const { first, second, p01Called, installation } = await changeWhileFirstRuns(kind, change);
      report.add(
        `${what}, while p00 (the first of a two-project job) runs`,
        `p00 (already running) succeeded; p01 failed ${code}, plugin not called for it`,
        `p00 ${first.status}; p01 ${second.status} (${second.error?.code}); p01 called: ${p01Called}`,
      );
      expect(first.status).toBe('succeeded');
      expect(second).toMatchObject({ status: 'failed', error: { code } });
      expect(p01Called).toBe(false);
      if (kind === 'fingerprint') {
        const plugin = await installation.runtime.plugins.show(PLUGIN_ID);
        expect(plugin).toMatchObject({ trust: 'changed', enabled: false });
      }
    });
  }

  it('a batch call sends no per-call read of the plugin, project or cancel mark and no per-call publish', async () => {
    const installation = await suite.install('commands');
    const { runtime } = installation;
    await addProjects(installation, 0);
    await startWorker(installation, { concurrency: 2 });
    const redis = runtime.redis;
    await redis.config('RESETSTAT');
    const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
    const finished = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 60_000, results: false });
    const stats = await redis.info('commandstats');
    const calls = (name: string) =>
      Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
    const perCall = (name: string) => calls(name) / PROJECTS;
    report.add(
      `a ${PROJECTS}-project batch (two projects per job), Redis commands per call`,
      'one GET (the call-state token); plugin, project and cancel mark read once per job; one publish per recorded group',
      `get ${perCall('get').toFixed(2)}, hexists ${perCall('hexists').toFixed(2)}, publish ${perCall('publish').toFixed(2)}, hsetnx ${perCall('hsetnx').toFixed(2)}`,
    );
    expect(finished.succeeded).toBe(PROJECTS);
    // Once per job (33 jobs) at most, where it was twice per call.
    expect(calls('hexists')).toBeLessThanOrEqual(Math.ceil(PROJECTS / 2) + 2);
    expect(calls('hsetnx')).toBe(0);
    // The record script publishes once per group of outcomes (BullMQ publishes too, once per job at most).
    expect(calls('publish')).toBeLessThan(PROJECTS);
  });
});
