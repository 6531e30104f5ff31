// `project scan` says what each directory is to the installation: new, known
// (registered before) or missing (its directory is gone, as after a rename);
// `--prune` and `project forget` forget the missing ones.
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { cliOn, onlyJson, requireBuiltCli, type Installation } from './support.js';

interface Report {
  registered: { id: string; scan: string }[];
  missing: { id: string }[];
  pruned: string[];
}

let redis: OwnedRedis;
let cleanup: () => Promise<void>;
let cli: ReturnType<typeof cliOn>;
let projects: string;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const made = await makeDataDir();
  cleanup = made.cleanup;
  projects = join(made.dataDir, 'src');
  for (const name of ['api', 'web']) await mkdir(join(projects, name), { recursive: true });
  const installation: Installation = {
    dataDir: made.dataDir,
    redisUrl: redis.url,
    prefix: uniquePrefix('project-scan'),
  };
  cli = cliOn(installation);
}, 60_000);

afterAll(async () => {
  await redis?.stop();
  await cleanup?.();
});

const scanOf = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .slice(1)
      .filter((line) => line.trim() !== '' && !line.includes(' gone '))
      .map((line) => line.split(/\s+/).slice(0, 2)),
  );

describe('project scan', () => {
  it('marks each row new, known or missing; --prune and project forget forget the missing', async () => {
    const first = await cli(['project', 'scan', projects]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.split('\n')[0]).toMatch(/^ID\s+SCAN\s+NAME/);
    expect(scanOf(first.stdout)).toEqual({ api: 'new', web: 'new' });

    // web is renamed, a new directory appears: the old id stays missing, with how to forget it.
    await rename(join(projects, 'web'), join(projects, 'web-app'));
    await mkdir(join(projects, 'worker'));
    const second = await cli(['project', 'scan', projects]);
    expect(second.code, second.stderr).toBe(0);
    expect(scanOf(second.stdout)).toEqual({ api: 'known', 'web-app': 'new', worker: 'new', web: 'missing' });
    expect(second.stdout).toContain(
      `1 project's directory is gone (renamed or deleted: a renamed one is registered again as a new project); forget it with \`switchyard project scan ${projects} --prune\` or \`switchyard project forget web\``,
    );
    const json = onlyJson<Report>(await cli(['--json', 'project', 'scan', projects]));
    expect(json.registered.map((project) => [project.id, project.scan])).toEqual([
      ['api', 'known'],
      ['web-app', 'known'],
      ['worker', 'known'],
    ]);
    expect(json.missing.map((project) => project.id)).toEqual(['web']);
    expect(json.pruned).toEqual([]);

    const pruned = await cli(['project', 'scan', projects, '--prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(scanOf(pruned.stdout)).toMatchObject({ web: 'forgotten' });
    expect(pruned.stdout).not.toContain(' gone ');
    const listed = onlyJson<{ id: string }[]>(await cli(['--json', 'project', 'list']));
    expect(listed.map((project) => project.id)).toEqual(['api', 'web-app', 'worker']);

    // forget is remove's other name.
    const forgot = await cli(['project', 'forget', 'worker']);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stdout).toContain('removed project worker');
  });
});
