// Projects a fleet owner can trust the list of: a root gone missing is shown
// and refused before any plugin starts (PROJECT_ROOT_MISSING), one real
// directory is one project (a second id, also through a symlink or a bind
// mount, is refused naming the first), a scan registers what it can and lists each refusal
// (exit 1), and labels pick the projects a batch inspects.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { PLUGIN_ID as QUEUE, installQueuePlugin } from '../support/workers.js';
import {
  cliOn,
  expectUsageError,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  startWorker,
  stopAll,
  type Installation,
} from './support.js';

const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];

interface Listed {
  id: string;
  root: string;
  trusted: boolean;
  labels: string[];
  rootMissing: boolean;
}
interface Batch {
  total: number;
  results: { projectId: string; status: string; error?: { code: string; message: string } }[];
}

let redis: OwnedRedis;
let root: string;
let packageDir: string;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;
/** Bind mounts made by the tests, undone before the directory is removed. */
const mounts: string[] = [];
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('bind-mount alias test skipped: mount --bind needs root');

/** The projects the fixture was called on (calls.log: `<method> <project|-> …`). */
async function calledOn(): Promise<string[]> {
  const log = await readFile(join(packageDir, 'calls.log'), 'utf8').catch(() => '');
  return log
    .split('\n')
    .filter((line) => line.startsWith('project.'))
    .map((line) => line.split(' ')[1]!);
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-projects-trust-'));
  const dataDir = join(root, 'data');
  packageDir = await installQueuePlugin(dataDir);
  for (const name of ['alpha', 'beta']) await mkdir(join(root, 'projects', name), { recursive: true });
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-projects-trust') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, QUEUE, []);
  // The fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
  const policy = await cli(['plugin', 'set', QUEUE, '--allow-write', packageDir, '--allow-read', '/proc']);
  expect(policy.code, policy.stderr).toBe(0);
  const scopes = ALL_SCOPES.flatMap((scope) => ['--scope', scope]);
  const enabled = await cli(['plugin', 'enable', QUEUE, ...scopes, '--yes']);
  expect(enabled.code, enabled.stderr).toBe(0);
  const scanned = await cli(['project', 'scan', join(root, 'projects'), '--trust']);
  expect(scanned.code, scanned.stderr).toBe(0);
  await startWorker(installation);
}, 60_000);

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  for (const mountpoint of mounts) execFileSync('umount', [mountpoint]);
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a project whose root is missing', () => {
  it('is listed as missing; its inspection and an operation fail PROJECT_ROOT_MISSING, the plugin never ran', async () => {
    const ghost = join(root, 'elsewhere', 'ghost');
    await mkdir(ghost, { recursive: true });
    const added = await cli(['project', 'add', ghost, '--trust']);
    expect(added.code, added.stderr).toBe(0);
    await rm(ghost, { recursive: true });

    const listed = onlyJson<Listed[]>(await cli(['--json', 'project', 'list']));
    expect(listed.map((project) => [project.id, project.rootMissing])).toEqual([
      ['alpha', false],
      ['beta', false],
      ['ghost', true],
    ]);
    const human = await cli(['project', 'list']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`${ghost} (missing)`);
    expect(human.stdout).not.toContain(`${join(root, 'projects', 'alpha')} (missing)`);

    const inspected = await cli(['--json', 'inspect', QUEUE, 'ghost', 'alpha']);
    expect(inspected.code, inspected.stderr).toBe(1);
    const batch = onlyJson<Batch>(inspected);
    const byId = Object.fromEntries(batch.results.map((result) => [result.projectId, result]));
    expect(byId.alpha?.status).toBe('succeeded');
    expect(byId.ghost).toMatchObject({ status: 'failed', error: { code: 'PROJECT_ROOT_MISSING' } });
    expect(byId.ghost?.error?.message).toContain(ghost);

    const ran = await cli(['--json', 'run', QUEUE, 'ghost', 'fixture.echo', '--yes', '--wait']);
    expect(ran.code, ran.stderr).toBe(1);
    expect(onlyJson<{ state: string; errorCode: string }>(ran)).toMatchObject({
      state: 'failed',
      errorCode: 'PROJECT_ROOT_MISSING',
    });

    // The plugin ran for alpha, never for ghost.
    const projects = await calledOn();
    expect(projects).toContain('alpha');
    expect(projects).not.toContain('ghost');
    expect((await cli(['project', 'remove', 'ghost'])).code).toBe(0);
  }, 60_000);
});

describe('one real directory is one project', () => {
  it('a second id over a registered directory is refused naming the first, also through a symlink', async () => {
    const alpha = join(root, 'projects', 'alpha');
    const again = await cli(['project', 'add', alpha, '--id', 'alpha-two']);
    expectUsageError(again, /directory .*alpha is already project alpha/);

    const link = join(root, 'alpha-link');
    await symlink(alpha, link);
    const viaLink = await cli(['--json', 'project', 'add', link, '--id', 'via-link']);
    expect(viaLink.code).toBe(2);
    expect(onlyJson<{ error: { code: string; message: string } }>(viaLink).error).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('is already project alpha'),
    });
    const ids = onlyJson<Listed[]>(await cli(['--json', 'project', 'list'])).map((project) => project.id);
    expect(ids).toEqual(['alpha', 'beta']);
    // Re-adding the same directory under its own id (the link's target's name) is still fine.
    const readded = onlyJson<Listed>(await cli(['--json', 'project', 'add', link]));
    expect([readded.id, readded.root]).toEqual(['alpha', alpha]);
  });

  it.skipIf(!isRoot)(
    'a bind mount of a registered directory (same device and inode) is refused naming it',
    async () => {
      const alpha = join(root, 'projects', 'alpha');
      const alias = join(root, 'bound', 'alpha-bound');
      await mkdir(alias, { recursive: true });
      execFileSync('mount', ['--bind', alpha, alias]);
      mounts.push(alias);
      const added = await cli(['--json', 'project', 'add', alias, '--trust']);
      expect(added.code, added.stdout).toBe(2);
      expect(onlyJson<{ error: { code: string; message: string } }>(added).error).toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining(`is already project alpha (the same directory as ${alpha})`),
      });
      // A scan of a directory holding the mount refuses it too.
      const scanned = await cli(['--json', 'project', 'scan', join(root, 'bound')]);
      const report = onlyJson<{ refused: { path: string; reason: string }[] }>(scanned);
      expect(report.refused).toContainEqual({
        path: alias,
        reason: expect.stringContaining('is already project alpha'),
      });
      const ids = onlyJson<Listed[]>(await cli(['--json', 'project', 'list'])).map((project) => project.id);
      expect(ids).not.toContain('alpha-bound');
    },
  );
});

describe('project scan', () => {
  it('registers what it can, lists each refusal and exits 1; --json names them', async () => {
    const dir = join(root, 'partial');
    for (const name of ['Dup X', 'dup-x', 'fine']) await mkdir(join(dir, name), { recursive: true });
    const scanned = await cli(['project', 'scan', dir]);
    expect(scanned.code, scanned.stderr).toBe(1);
    expect(scanned.stderr).toMatch(/1 directory was refused; 2 registered/);
    expect(scanned.stdout).toContain(`refused ${join(dir, 'dup-x')}: project id dup-x clashes`);
    expect(scanned.stdout).toContain('fine');

    const again = await cli(['--json', 'project', 'scan', dir]);
    expect(again.code, again.stderr).toBe(1);
    const report = onlyJson<{ registered: Listed[]; refused: { path: string; reason: string }[] }>(again);
    expect(report.registered.map((project) => [project.id, project.root])).toEqual([
      ['dup-x', join(dir, 'Dup X')],
      ['fine', join(dir, 'fine')],
    ]);
    expect(report.refused).toEqual([
      { path: join(dir, 'dup-x'), reason: expect.stringMatching(/^project id dup-x clashes: /) },
    ]);
    for (const id of ['dup-x', 'fine']) expect((await cli(['project', 'remove', id])).code).toBe(0);
  });
});

describe('labels', () => {
  it('add, remove and list; a bad label exits 2 naming it and changes nothing', async () => {
    const added = onlyJson<Listed>(await cli(['--json', 'project', 'label', 'add', 'alpha', 'web', 'prod']));
    expect(added.labels).toEqual(['prod', 'web']);
    const removed = onlyJson<Listed>(await cli(['--json', 'project', 'label', 'remove', 'alpha', 'prod']));
    expect(removed.labels).toEqual(['web']);
    expectUsageError(await cli(['project', 'label', 'add', 'alpha', 'ok', 'Bad!']), /label "Bad!" must be/);
    expectUsageError(await cli(['project', 'label', 'add', 'nope', 'web']), /unknown project "nope"/);
    const listed = onlyJson<Listed[]>(await cli(['--json', 'project', 'list']));
    expect(listed.map((project) => [project.id, project.labels])).toEqual([
      ['alpha', ['web']],
      ['beta', []],
    ]);
    expect((await cli(['project', 'list'])).stdout).toMatch(/alpha .*web/);
    const audit = onlyJson<{ action: string; target: string; detail: { labels?: string[] } }[]>(
      await cli(['--json', 'audit', '--action', 'project.', '--limit', '10']),
    );
    expect(
      audit
        .filter((entry) => entry.action.includes('label'))
        .map((entry) => [entry.action, entry.target, entry.detail.labels]),
    ).toEqual([
      ['project.unlabel', 'alpha', ['prod']],
      ['project.label', 'alpha', ['prod', 'web']],
    ]);
  });

  it('scan --label labels what it registers; inspect --label selects exactly the labelled ones', async () => {
    const dir = join(root, 'fleet');
    for (const name of ['f1', 'f2']) await mkdir(join(dir, name), { recursive: true });
    const scanned = onlyJson<{ registered: Listed[] }>(
      await cli(['--json', 'project', 'scan', dir, '--trust', '--label', 'fleet']),
    );
    expect(scanned.registered.map((project) => [project.id, project.labels])).toEqual([
      ['f1', ['fleet']],
      ['f2', ['fleet']],
    ]);
    const inspected = await cli(['--json', 'inspect', QUEUE, '--label', 'fleet']);
    expect(inspected.code, inspected.stderr).toBe(0);
    const batch = onlyJson<Batch>(inspected);
    expect(batch.total).toBe(2);
    expect(batch.results.map((result) => result.projectId).sort()).toEqual(['f1', 'f2']);
    expectUsageError(await cli(['inspect', QUEUE, '--label', 'nobody']), /no project has the label nobody/);
    expectUsageError(await cli(['inspect', QUEUE, 'alpha', '--label', 'fleet']), /only one of them/);
  }, 60_000);
});
