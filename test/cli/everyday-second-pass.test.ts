// Everyday use, second pass (real CLI processes in local mode, a real worker,
// an owned Redis): a batch over part of the fleet is compared project by
// project with each project's own previous result (batch diff, trend); a
// fact name no project has is refused with "did you mean"; counts put
// `(none)` first; and the small CLI gaps: schedule add --label, project
// history without --plugin, batch export without --format, batch show
// <plugin> latest and --status.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, startScheduler, stopAll as stopApi } from '../api/support.js';
import {
  FIXTURE_INSPECTOR_DIST,
  installPackage,
  makeDataDir,
  makeProject,
  uniquePrefix,
} from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  expectUsageError,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  startWorker,
  stopAll,
} from './support.js';

const PLUGIN = 'fixture-inspector';
const SCOPES = ['project.metadata.read', 'project.files.read'];

let redis: OwnedRedis | undefined;
let cleanup: (() => Promise<void>) | undefined;
let installation: { dataDir: string; redisUrl: string; prefix: string };
let cli: ReturnType<typeof cliOn>;

interface Batch {
  batchId: string;
  state: string;
  total: number;
  succeeded: number;
  partial?: boolean;
}

async function inspect(...selection: string[]): Promise<Batch> {
  return onlyJson<Batch>(await cli(['--json', 'inspect', PLUGIN, ...selection], 45_000));
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const made = await makeDataDir();
  const projects = join(made.dataDir, '..', `${made.dataDir.split('/').pop()}-projects`);
  cleanup = async () => {
    await made.cleanup();
    await rm(projects, { recursive: true, force: true });
  };
  await installPackage(made.dataDir, FIXTURE_INSPECTOR_DIST, PLUGIN);
  await mkdir(projects, { recursive: true });
  await makeProject(projects, 'api', ['go.mod']);
  await makeProject(projects, 'blog', ['package.json']);
  await makeProject(projects, 'docs', []);
  await makeProject(projects, 'shop', ['package.json', 'go.mod']);
  installation = { dataDir: made.dataDir, redisUrl: redis.url, prefix: uniquePrefix('everyday2') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, PLUGIN, SCOPES);
  expect((await cli(['project', 'scan', projects, '--trust'])).code).toBe(0);
  expect((await cli(['project', 'label', 'add', 'shop', 'pay'])).code).toBe(0);
  expect((await cli(['project', 'label', 'add', 'api', 'pay'])).code).toBe(0);
  await startWorker(installation);
  expect((await inspect('--all')).state).toBe('succeeded');
}, 90_000);

afterAll(async () => {
  await stopApi();
  await stopAll();
  await redis?.stop();
  await cleanup?.();
});

describe('facts: a fact name no project has', () => {
  it('--fact with a typo is exit 2 with "did you mean" and the known facts, not "(none) 4"', async () => {
    const message = expectUsageError(
      await cli(['facts', PLUGIN, '--fact', 'file.go.mdo', '--counts']),
      /did you mean file\.go\.mod\?/,
    );
    expect(message).toContain('file.package.json');
    expectUsageError(await cli(['--json', 'facts', PLUGIN, '--fact', 'file.go.mdo']), /file\.go\.mdo/);
  });

  it('--where with a typo is exit 2, not "no project matches"', async () => {
    expectUsageError(
      await cli(['facts', PLUGIN, '--where', 'file.go.mdo=go.mod']),
      /no project of fixture-inspector has a fact "file\.go\.mdo": did you mean file\.go\.mod\?/,
    );
    // A known fact no filtered project matches is still an empty answer, exit 0.
    const none = await cli(['facts', PLUGIN, '--where', 'file.go.mod=nothing']);
    expect(none.code, none.stderr).toBe(0);
  });

  it('--counts lists (none) first, then most common first', async () => {
    const counts = await cli(['facts', PLUGIN, '--fact', 'file.go.mod', '--counts']);
    expect(counts.code, counts.stderr).toBe(0);
    const rows = counts.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/));
    expect(rows).toEqual([
      ['(none)', '2'],
      ['go.mod', '2'],
    ]);
    const json = onlyJson<{ counts: { value: string | null; count: number }[] }>(
      await cli(['--json', 'facts', PLUGIN, '--fact', 'file.package.json', '--counts']),
    );
    expect(json.counts.map((count) => count.value)).toEqual([null, 'package.json']);
  });
});

interface Diff {
  from: string;
  to: string;
  projects: { projectId: string; status: { from: string; to: string }; added: { id: string }[] }[];
}

describe('a batch over part of the fleet', () => {
  it('batch diff <plugin> latest compares each project with its own previous result, not "succeeded → absent"', async () => {
    const part = await inspect('--label', 'pay');
    expect(part).toMatchObject({ total: 2, partial: true });
    const afterPart = onlyJson<Diff>(await cli(['--json', 'batch', 'diff', PLUGIN, 'latest']));
    expect(afterPart.to).toBe(part.batchId);
    expect(afterPart.projects).toEqual([]);
    const text = await cli(['batch', 'diff', PLUGIN, 'latest']);
    expect(text.stdout).toMatch(/^no difference from /m);

    // The whole fleet again, one project changed: blog and docs are compared with the first batch.
    await makeProject(
      join(installation.dataDir, '..', `${installation.dataDir.split('/').pop()}-projects`),
      'docs',
      ['go.mod'],
    );
    const full = await inspect('--all');
    expect(full.partial).toBeUndefined();
    const afterFull = onlyJson<Diff>(await cli(['--json', 'batch', 'diff', PLUGIN, 'latest']));
    expect(afterFull.from).toBe(part.batchId);
    expect(
      afterFull.projects.map((project) => [
        project.projectId,
        project.status,
        project.added.map((f) => f.id),
      ]),
    ).toEqual([['docs', { from: 'succeeded', to: 'succeeded' }, ['file.go.mod']]]);
  }, 120_000);

  it('the trend marks the batch over part of the fleet', async () => {
    const api = await startApi(installation);
    const trend = await call<{ total: number; succeeded: number; partial: boolean; newFailures: number }[]>(
      api,
      'GET',
      `/api/v1/plugins/${PLUGIN}/trend?batches=10`,
      { token: api.adminToken },
    );
    expect(trend.status, trend.text).toBe(200);
    expect(trend.json.map((point) => [point.total, point.partial, point.newFailures])).toEqual([
      [4, false, 0],
      [2, true, 0],
      [4, false, 0],
    ]);
    await stopApi();
  }, 60_000);
});

describe('small gaps of the CLI', () => {
  it('schedule add --label inspects the projects with the label at each run', async () => {
    const added = await cli([
      '--json',
      'schedule',
      'add',
      PLUGIN,
      '--label',
      'pay',
      '--every',
      '1h',
      '--name',
      'pay',
    ]);
    expect(onlyJson<{ projects: unknown }>(added).projects).toEqual({ label: 'pay' });
    const listed = await cli(['schedule', 'list']);
    expect(listed.stdout).toMatch(/pay\s+fixture-inspector\s+label:pay/);
    expectUsageError(
      await cli(['schedule', 'add', PLUGIN, 'shop', '--label', 'pay', '--every', '1h']),
      /only one of them/,
    );
    expectUsageError(await cli(['schedule', 'add', PLUGIN, '--label', 'Pay', '--every', '1h']), /label/);
    // The first run starts at once; the label is resolved then.
    await startScheduler(installation);
    let run: Batch & { scheduleId?: string } = { batchId: '', state: '', total: 0, succeeded: 0 };
    for (let tries = 0; tries < 60 && !run.scheduleId; tries++) {
      const batches = onlyJson<(Batch & { scheduleId?: string })[]>(
        await cli(['--json', 'batch', 'list', '--plugin', PLUGIN, '--limit', '1']),
      );
      if (batches[0]?.scheduleId) run = batches[0];
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(run).toMatchObject({ total: 2, partial: true });
    expect((await cli(['schedule', 'pause', 'pay'])).code).toBe(0);
  }, 90_000);

  it('project history leaves out --plugin when one plugin is installed', async () => {
    const history = onlyJson<{ status: string }[]>(await cli(['--json', 'project', 'history', 'shop']));
    expect(history.length).toBeGreaterThanOrEqual(3);
    expect(history.every((entry) => entry.status === 'succeeded' || entry.status === 'pending')).toBe(true);
  });

  it('batch export latest without --format writes jsonl', async () => {
    const exported = await cli(['batch', 'export', 'latest', '--plugin', PLUGIN]);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(lines[0]!)).toHaveProperty('projectId');
  });

  it('batch show <plugin> latest works as batch diff <plugin> latest does, and --status keeps one outcome', async () => {
    const shown = onlyJson<{ batchId: string; results: { status: string }[] }>(
      await cli(['--json', 'batch', 'show', PLUGIN, 'latest', '--watch', '--status', 'succeeded']),
    );
    expect(shown.results.length).toBeGreaterThan(0);
    expect(shown.results.every((outcome) => outcome.status === 'succeeded')).toBe(true);
    const failed = onlyJson<{ batchId: string; results: unknown[]; succeeded: number }>(
      await cli(['--json', 'batch', 'show', PLUGIN, 'latest', '--status', 'failed']),
    );
    expect(failed.batchId).toBe(shown.batchId);
    expect(failed.results).toEqual([]);
    expect(failed.succeeded).toBeGreaterThan(0);
    expectUsageError(await cli(['batch', 'show', PLUGIN, 'latest', '--status', 'odd']), /--status/);
  });
});
