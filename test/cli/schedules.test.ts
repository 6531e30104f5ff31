// Safe schedules, end to end: real CLI processes (local mode, and a viewer
// and an operator over a real api), a real worker and scheduler, an owned
// Redis. A schedule runs no more often than the host minimum (1 minute by
// default; SWITCHYARD_SCHEDULE_MIN_INTERVAL=1s here where runs must happen
// quickly), names only known projects, skips a run while its previous batch
// still runs and records it, shows a failing run, pauses and resumes, is
// named, and its batches can be cancelled in bulk.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, stopAll as stopApiProcesses, type Api } from '../api/support.js';
import { completion } from '../support/cli-process.js';
import { FIXTURE_INSPECTOR_DIST, installPackage, makeDataDir, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { installQueuePlugin } from '../support/workers.js';
import { globalArgs, requireBuiltCli, spawnCli, startWorker, stopAll } from './support.js';

const FIXTURE = 'fixture-inspector';
const QUEUE = 'queue-plugin';
const SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
/** Runs may come every second in the tests that wait for them. */
const FAST = { SWITCHYARD_SCHEDULE_MIN_INTERVAL: '1s' };

let redis: OwnedRedis | undefined;
let cleanup: (() => Promise<void>) | undefined;
let installation: { dataDir: string; redisUrl: string; prefix: string };
let packageDir = '';
let api: Api;
const tokens: Record<'viewer' | 'operator', string> = { viewer: '', operator: '' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI in local mode, to its end; `env` on top of a clean environment (no SWITCHYARD_*). */
async function cli(args: string[], env: Record<string, string> = FAST): Promise<Run> {
  const child = spawnCli([...globalArgs(installation), ...args], env);
  const { code } = await completion(child.proc, { timeoutMs: 30_000, closed: true });
  return { code, stdout: child.output.stdout, stderr: child.output.stderr };
}

function json<T>(run: Run): T {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

interface ScheduleView {
  id: string;
  name: string;
  pausedAt?: string;
  nextRunAt?: string;
  lastRun?: {
    at: string;
    outcome: 'started' | 'skipped' | 'failed';
    batchId?: string;
    batch?: { state: string };
    error?: { code: string; message: string };
    skips?: number;
  };
}
interface AuditEntry {
  action: string;
  target: string;
  detail: Record<string, unknown>;
}

/** waitFor, polling less often: each probe is a CLI process. */
const poll = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number) =>
  waitFor(what, probe, timeoutMs, 300);

const schedules = async () => json<ScheduleView[]>(await cli(['--json', 'schedule', 'list']));
const scheduleNamed = async (name: string) => (await schedules()).find((item) => item.name === name);
const auditOf = async (action: string) =>
  json<AuditEntry[]>(await cli(['--json', 'audit', '--action', action, '--limit', '200']));

async function trustAndEnable(pluginId: string): Promise<void> {
  const { fingerprint } = json<{ fingerprint: string }>(await cli(['--json', 'plugin', 'show', pluginId]));
  expect((await cli(['plugin', 'trust', pluginId, '--fingerprint', fingerprint, '--yes'])).code).toBe(0);
  const scopes = SCOPES.flatMap((scope) => ['--scope', scope]);
  const enabled = await cli(['plugin', 'enable', pluginId, ...scopes, '--yes']);
  expect(enabled.code, enabled.stderr).toBe(0);
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const made = await makeDataDir();
  cleanup = made.cleanup;
  installation = { dataDir: made.dataDir, redisUrl: redis.url, prefix: uniquePrefix('schedules') };
  await installPackage(made.dataDir, FIXTURE_INSPECTOR_DIST, FIXTURE);
  packageDir = await installQueuePlugin(made.dataDir);
  const projects = join(made.dataDir, 'projects');
  for (const name of ['shop', 'blog']) await mkdir(join(projects, name), { recursive: true });
  expect((await cli(['plugin', 'refresh'])).code).toBe(0);
  await trustAndEnable(FIXTURE);
  // The fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
  const policy = await cli(['plugin', 'set', QUEUE, '--allow-write', packageDir, '--allow-read', '/proc']);
  expect(policy.code, policy.stderr).toBe(0);
  await trustAndEnable(QUEUE);
  expect((await cli(['project', 'scan', projects, '--trust'])).code).toBe(0);
  // Before any token exists, so the api writes its admin token.
  api = await startApi(installation, [], FAST);
  for (const role of ['viewer', 'operator'] as const) {
    const created = await cli(['token', 'create', '--name', `${role}-person`, '--role', role]);
    expect(created.code, created.stderr).toBe(0);
    tokens[role] = created.stdout.trim();
  }
  await startWorker(installation, 2);
  const scheduler = spawnCli([...globalArgs(installation), 'scheduler']);
  await waitFor(
    'the scheduler to sync',
    async () => scheduler.output.stdout.includes('scheduler-synced'),
    20_000,
  );
}, 120_000);

afterAll(async () => {
  await stopAll();
  await stopApiProcesses();
  await redis?.stop();
  await cleanup?.();
});

describe('what a schedule may be', () => {
  it('--every 1s is refused (exit 2) naming the host minimum, and nothing is saved', async () => {
    const run = await cli(['schedule', 'add', FIXTURE, 'shop', '--every', '1s'], {});
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/the interval 1s \(--every\) is too short: the minimum interval is 1m/);
    expect(run.stderr).toContain('SWITCHYARD_SCHEDULE_MIN_INTERVAL');
    // The api applies its own host's policy (1s here): 500 ms is under any minimum.
    const answer = await call<{ status: number }>(api, 'POST', '/api/v1/schedules', {
      token: tokens.operator,
      body: { pluginId: FIXTURE, projects: ['shop'], everyMs: 500 },
    });
    expect(answer.status, JSON.stringify(answer.json)).toBe(400);
    expect(await schedules()).toEqual([]);
  });

  it('--every 0s is refused naming the real minimum, not a parser floor', async () => {
    const run = await cli(['schedule', 'add', FIXTURE, 'shop', '--every', '0s'], {});
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/the interval 0ms \(--every\) is too short: the minimum interval is 1m/);
    expect(run.stderr).not.toMatch(/from 1s/);
    expect(await schedules()).toEqual([]);
  });

  it('a cron pattern that fires every second is refused naming the minimum', async () => {
    const run = await cli(['schedule', 'add', FIXTURE, '--all', '--cron', '* * * * * *'], {});
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/runs every 1s, too often: the minimum interval is 1m/);
    // Every minute is allowed at the default minimum, and removed again.
    const minute = json<{ id: string }>(
      await cli(['--json', 'schedule', 'add', FIXTURE, '--all', '--cron', '* * * * *'], {}),
    );
    expect((await cli(['schedule', 'remove', minute.id])).code).toBe(0);
    expect(await schedules()).toEqual([]);
  });

  it('an unknown project is refused at add (exit 2 naming it)', async () => {
    const run = await cli(['schedule', 'add', FIXTURE, 'shop', 'proj-nope', '--every', '5m']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('unknown project "proj-nope"');
    expect(await schedules()).toEqual([]);
  });
});

describe('names', () => {
  it('a default name is derived and numbered when taken; names work wherever ids do', async () => {
    const first = json<ScheduleView>(
      await cli(['--json', 'schedule', 'add', FIXTURE, 'shop', '--every', '1h']),
    );
    const second = json<ScheduleView>(
      await cli(['--json', 'schedule', 'add', FIXTURE, 'shop', '--every', '1h']),
    );
    expect(first.id).toMatch(/^sched_/);
    expect([first.name, second.name]).toEqual([`${FIXTURE}-shop`, `${FIXTURE}-shop-2`]);
    const named = await cli([
      'schedule',
      'add',
      FIXTURE,
      '--all',
      '--cron',
      '0 3 * * *',
      '--name',
      'nightly',
    ]);
    expect(named.stdout).toMatch(/^schedule sched_\w+ added \(name nightly\)$/m);
    // A name taken is refused.
    const taken = await cli(['schedule', 'add', FIXTURE, '--all', '--every', '2h', '--name', 'nightly']);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/a schedule named "nightly" exists already/);
    // Edit, pause, resume and remove by name.
    const edited = json<{ cron: string; everyMs?: number }>(
      await cli(['--json', 'schedule', 'edit', 'nightly', '--cron', '0 4 * * *']),
    );
    expect(edited.cron).toBe('0 4 * * *');
    const renamed = json<ScheduleView>(
      await cli(['--json', 'schedule', 'edit', second.name, '--name', 'shop-hourly', '--every', '2h']),
    );
    expect(renamed).toMatchObject({ id: second.id, name: 'shop-hourly', everyMs: 7_200_000 });
    expect(renamed).not.toHaveProperty('cron');
    expect((await cli(['schedule', 'pause', 'nightly'])).stdout).toMatch(/\(nightly\) paused/);
    expect((await scheduleNamed('nightly'))?.pausedAt).toBeDefined();
    expect((await cli(['schedule', 'resume', 'nightly'])).code).toBe(0);
    expect((await scheduleNamed('nightly'))?.nextRunAt).toBeDefined();
    for (const name of ['nightly', 'shop-hourly', first.name])
      expect((await cli(['schedule', 'remove', name])).code).toBe(0);
    const gone = await cli(['schedule', 'remove', 'nightly']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/unknown schedule "nightly"/);
    expect(await schedules()).toEqual([]);
    const actions = (await auditOf('schedule.')).map((entry) => entry.action);
    for (const action of [
      'schedule.add',
      'schedule.edit',
      'schedule.pause',
      'schedule.resume',
      'schedule.remove',
    ])
      expect(actions).toContain(action);
  });
});

describe('roles', () => {
  it('a viewer lists schedules but may not add one (403 naming operator); an operator adds, pauses and removes', async () => {
    const added = json<ScheduleView>(
      await cli(['--json', 'schedule', 'add', FIXTURE, 'shop', '--every', '1h', '--name', 'seen']),
    );
    const listed = await call<ScheduleView[]>(api, 'GET', '/api/v1/schedules', { token: tokens.viewer });
    expect(listed.status).toBe(200);
    expect(listed.json.map((item) => item.name)).toEqual(['seen']);
    expect(listed.json[0]!.nextRunAt).toBeDefined();
    const body = { pluginId: FIXTURE, projects: ['shop'], everyMs: 3_600_000, name: 'viewer-made' };
    const refused = await call<{ requiredRole: string }>(api, 'POST', '/api/v1/schedules', {
      token: tokens.viewer,
      body,
    });
    expect(refused.status).toBe(403);
    expect(refused.json.requiredRole).toBe('operator');
    for (const path of [`/api/v1/schedules/seen/pause`, `/api/v1/schedules/seen`]) {
      const answer = await call(api, 'POST', path, { token: tokens.viewer, body: {} });
      expect(answer.status, path).toBe(403);
    }
    expect((await call(api, 'DELETE', '/api/v1/schedules/seen', { token: tokens.viewer })).status).toBe(403);
    // An operator may.
    const made = await call<ScheduleView>(api, 'POST', '/api/v1/schedules', { token: tokens.operator, body });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const paused = await call<ScheduleView>(api, 'POST', '/api/v1/schedules/viewer-made/pause', {
      token: tokens.operator,
      body: {},
    });
    expect(paused.status).toBe(200);
    expect(paused.json.pausedAt).toBeDefined();
    for (const name of ['viewer-made', added.id]) {
      const removed = await call(api, 'DELETE', `/api/v1/schedules/${name}`, { token: tokens.operator });
      expect(removed.status, name).toBe(200);
    }
    const audit = await auditOf('schedule.add');
    expect(audit.some((entry) => entry.detail.name === 'viewer-made')).toBe(true);
  });
});

describe('runs', () => {
  it('a run while the previous batch still runs is skipped and recorded (list and audit)', async () => {
    // Long enough that one batch runs through the whole test on a loaded machine: every skip names it.
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '25000');
    try {
      const added = json<ScheduleView>(
        await cli(['--json', 'schedule', 'add', QUEUE, 'shop', '--every', '1s', '--name', 'slow']),
      );
      const skipped = await poll(
        'a skipped run',
        async () => (await auditOf('schedule.skipped')).find((entry) => entry.target === added.id),
        30_000,
      );
      const running = skipped.detail.runningBatchId as string;
      expect(running).toMatch(/^batch_/);
      const batch = json<{ state: string; scheduleId: string }>(
        await cli(['--json', 'batch', 'show', running]),
      );
      expect(batch).toMatchObject({ state: 'running', scheduleId: added.id });
      // Skips in a row: counted on the schedule, audited once.
      const view = await poll(
        'three skips in a row',
        async () => {
          const item = await scheduleNamed('slow');
          return item?.lastRun?.outcome === 'skipped' && (item.lastRun.skips ?? 0) >= 3 ? item : undefined;
        },
        30_000,
      );
      expect(view.lastRun).toMatchObject({ outcome: 'skipped', batchId: running });
      expect(view.nextRunAt).toBeDefined();
      // One row per run of skips: while this batch runs (the next batch starts a run of its own).
      const skippedRows = async () =>
        (await auditOf('schedule.skipped')).filter(
          (entry) => entry.target === added.id && entry.detail.runningBatchId === running,
        ).length;
      expect(await skippedRows()).toBe(1);
      const human = await cli(['schedule', 'list']);
      expect(human.stdout).toMatch(
        new RegExp(`skipped \\d+ times since \\S+ ago: previous batch running \\(${running}\\)`),
      );
      // The batch ends: one row closes the run of skips, with how many there were.
      expect((await cli(['batch', 'cancel', '--schedule', 'slow', '--yes'])).code).toBe(0);
      const ended = await poll(
        'the end of the skips',
        async () => (await auditOf('schedule.skips-ended')).find((entry) => entry.target === added.id),
        30_000,
      );
      expect(ended.detail).toMatchObject({ runningBatchId: running });
      expect(ended.detail.skips as number).toBeGreaterThanOrEqual(3);
      expect(await skippedRows()).toBe(1);
      // Removing the schedule cancels the batch it started next: nothing could name it afterwards.
      const next = await poll(
        'the next batch',
        async () => {
          const item = await scheduleNamed('slow');
          // Started, or already skipped for it (a run each second).
          const batchId = item?.lastRun?.batchId;
          return batchId !== undefined && batchId !== running ? batchId : undefined;
        },
        30_000,
      );
      const removed = await cli(['schedule', 'remove', 'slow']);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain(`cancelled its running batch ${next}`);
      expect(json<{ state: string }>(await cli(['--json', 'batch', 'show', next!])).state).toBe('cancelled');
      // Never two batches of the schedule at once: one ran, the rest were skipped.
      const batches = json<{ batchId: string; state: string; createdBy: string }[]>(
        await cli(['--json', 'batch', 'list', '--plugin', QUEUE, '--limit', '100']),
      ).filter((item) => item.createdBy === `scheduler:${added.id}`);
      expect(batches.filter((item) => item.state === 'running')).toEqual([]);
      await cli(['batch', 'cancel', '--state', 'running', '--yes']);
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 150_000);

  it('a failing run (the plugin was disabled) shows in schedule list and the audit (schedule.failed)', async () => {
    const added = json<ScheduleView>(
      await cli(['--json', 'schedule', 'add', FIXTURE, 'shop', '--every', '1s', '--name', 'failing']),
    );
    try {
      expect((await cli(['plugin', 'disable', FIXTURE])).code).toBe(0);
      const failed = await poll(
        'a failed run',
        async () => (await auditOf('schedule.failed')).find((entry) => entry.target === added.id),
        30_000,
      );
      expect(failed.detail.error).toMatchObject({ code: 'PLUGIN_DISABLED' });
      const view = await scheduleNamed('failing');
      expect(view?.lastRun).toMatchObject({ outcome: 'failed', error: { code: 'PLUGIN_DISABLED' } });
      expect((await cli(['schedule', 'list'])).stdout).toMatch(/failed: PLUGIN_DISABLED /);
      // The api shows the same to a viewer.
      const listed = await call<ScheduleView[]>(api, 'GET', '/api/v1/schedules', { token: tokens.viewer });
      expect(listed.json.find((item) => item.id === added.id)?.lastRun?.outcome).toBe('failed');
    } finally {
      expect((await cli(['schedule', 'remove', added.id])).code).toBe(0);
      await trustAndEnable(FIXTURE);
    }
  }, 60_000);

  it('pause stops the runs (no job scheduler, no next run); resume starts them again', async () => {
    const added = json<ScheduleView>(
      await cli(['--json', 'schedule', 'add', FIXTURE, 'shop', '--every', '1s', '--name', 'pausable']),
    );
    const lastRunAt = async () => (await scheduleNamed('pausable'))?.lastRun?.at;
    await poll('a first run', lastRunAt, 20_000);
    expect((await cli(['schedule', 'pause', 'pausable'])).code).toBe(0);
    const paused = await scheduleNamed('pausable');
    expect(paused?.pausedAt).toBeDefined();
    expect(paused).not.toHaveProperty('nextRunAt');
    // A run already handed to the worker may still finish; after that, none.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = await lastRunAt();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await lastRunAt()).toBe(before);
    expect((await cli(['schedule', 'list'])).stdout).toMatch(/pausable\s+\S+\s+\S+\s+paused: every 1s/);
    expect((await cli(['schedule', 'resume', 'pausable'])).code).toBe(0);
    await poll('a run after resume', async () => (await lastRunAt()) !== before, 20_000);
    expect((await cli(['schedule', 'remove', added.id])).code).toBe(0);
  }, 60_000);
});

describe('bulk cancel', () => {
  it('batch cancel --schedule cancels only what the schedule started; --state running needs --yes and cancels the rest', async () => {
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '20000');
    try {
      const added = json<ScheduleView>(
        await cli(['--json', 'schedule', 'add', QUEUE, 'shop', 'blog', '--every', '1h', '--name', 'bulky']),
      );
      const scheduled = await poll(
        'the schedule to start its batch',
        async () => (await scheduleNamed('bulky'))?.lastRun?.batchId,
        20_000,
      );
      expect((await cli(['schedule', 'pause', 'bulky'])).code).toBe(0);
      const manual = json<{ batchId: string }>(await cli(['--json', 'inspect', QUEUE, 'shop', '--no-wait']));
      const bySchedule = json<{ cancelled: { batchId: string; state: string; scheduleId: string }[] }>(
        await cli(['--json', 'batch', 'cancel', '--schedule', 'bulky']),
      );
      expect(bySchedule.cancelled.map((batch) => batch.batchId)).toEqual([scheduled]);
      expect(bySchedule.cancelled[0]).toMatchObject({ state: 'cancelled', scheduleId: added.id });
      expect(json<{ state: string }>(await cli(['--json', 'batch', 'show', manual.batchId])).state).toBe(
        'running',
      );
      // Every running batch, whoever started it: only with --yes.
      const unconfirmed = await cli(['batch', 'cancel', '--state', 'running']);
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(/confirm with --yes/);
      expect(json<{ state: string }>(await cli(['--json', 'batch', 'show', manual.batchId])).state).toBe(
        'running',
      );
      // Remotely, as an operator: the same route the CLI's remote mode calls.
      const answer = await call<{ cancelled: { batchId: string }[] }>(api, 'POST', '/api/v1/batches/cancel', {
        token: tokens.operator,
        body: { state: 'running' },
      });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      // Every running batch but the schedule's, already cancelled (an earlier test's may still run too).
      const rest = answer.json.cancelled.map((batch) => batch.batchId);
      expect(rest).toContain(manual.batchId);
      expect(rest).not.toContain(scheduled);
      const human = await cli(['batch', 'cancel', '--state', 'running', '--yes']);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/^cancelled 0 running batches$/m);
      const audit = await auditOf('batch.cancel-many');
      expect(audit.map((entry) => entry.detail.batchIds)).toContainEqual([scheduled]);
      expect((await cli(['schedule', 'remove', 'bulky'])).code).toBe(0);
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 90_000);
});
