// Projects: ids per docs/CLI.md, real paths, a clash refused on its own, trust kept on re-add.
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import { createCore, type Core } from '../../src/core/runtime/core-services.js';
import { projectIdFor } from '../../src/core/projects/project-service.js';
import { ProjectLock, projectLockName } from '../../src/core/projects/project-lock.js';
import { useCoreSuite } from '../support/core-suite.js';

const suite = useCoreSuite('projects');
let core: Core;
let dataDir: string;
beforeAll(() => void ({ core, dataDir } = suite));

describe('projects', () => {
  it('derives ids from directory names: lower-case, [a-z0-9._-] kept, the rest replaced by -', () => {
    expect(projectIdFor('My Project (v2)')).toBe('my-project--v2-');
    expect(projectIdFor('api.server_01')).toBe('api.server_01');
  });

  it('stores the real path of a project added through a symlink', async () => {
    await mkdir(join(dataDir, 'real', 'shop'), { recursive: true });
    await symlink(join(dataDir, 'real', 'shop'), join(dataDir, 'shop-link'));
    const project = await core.projects.add(join(dataDir, 'shop-link'), { id: 'shop' }, 'user:test');
    expect(project).toMatchObject({ id: 'shop', root: join(dataDir, 'real', 'shop'), trusted: false });
  });

  it('re-adding keeps an earlier trust decision, and every change is audited', async () => {
    await core.projects.setTrusted('shop', true, 'user:test');
    const again = await core.projects.add(join(dataDir, 'real', 'shop'), { id: 'shop' }, 'user:test');
    expect(again.trusted).toBe(true);
    const actions = (await readAudit(core.redis, core.keys, 3)).map((entry) => entry.action);
    expect(actions).toEqual(['project.update', 'project.trust', 'project.add']);
  });

  it('refuses a path that does not exist, naming it', async () => {
    await expect(core.projects.add(join(dataDir, 'nowhere'), {}, 'user:test')).rejects.toThrow(
      `project path ${join(dataDir, 'nowhere')} does not exist`,
    );
  });

  it('refuses the one of a scan whose id clashes, naming both paths, and registers the others', async () => {
    const dir = join(dataDir, 'clashing');
    await mkdir(join(dir, 'A B'), { recursive: true });
    await mkdir(join(dir, 'a-b'), { recursive: true });
    await mkdir(join(dir, 'other'), { recursive: true });
    const report = await core.projects.scan(dir, { trust: true }, 'user:test');
    expect(report.refused).toEqual([
      {
        path: join(dir, 'a-b'),
        reason: expect.stringContaining(
          `project id a-b clashes: ${join(dir, 'A B')} and ${join(dir, 'a-b')}`,
        ),
      },
    ]);
    expect(report.registered.map((project) => project.id)).toEqual(['a-b', 'other']);
    expect((await core.projects.list()).map((project) => [project.id, project.root])).toEqual([
      ['a-b', join(dir, 'A B')],
      ['other', join(dir, 'other')],
      ['shop', join(dataDir, 'real', 'shop')],
    ]);
  });

  it('locks operations by the real root: two ids over one directory (older data) never run at once', async () => {
    const real = join(dataDir, 'real', 'shop');
    await symlink(real, join(dataDir, 'shop-twin'));
    const [byRoot, byLink] = await Promise.all([
      projectLockName(real),
      projectLockName(join(dataDir, 'shop-twin')),
    ]);
    expect(byLink).toBe(byRoot);
    const first = await ProjectLock.acquire(core.redis, core.keys, byRoot, 'op_first', { ttlMs: 5_000 });
    expect(first).toBeDefined();
    expect(await ProjectLock.acquire(core.redis, core.keys, byLink, 'op_second', { ttlMs: 5_000 })).toBe(
      undefined,
    );
    await first!.release();
    const second = await ProjectLock.acquire(core.redis, core.keys, byLink, 'op_second', { ttlMs: 5_000 });
    expect(second).toBeDefined();
    await second!.release();
    // Another directory is another lock.
    expect(await projectLockName(join(dataDir, 'clashing', 'other'))).not.toBe(byRoot);
  });
});

describe('two processes changing one project at once', () => {
  it('an untrust and a label added at the same moment both land (no lost update)', async () => {
    // A second process's view: its own services and connections to the same Redis.
    const other = await createCore({ dataDir, redisUrl: suite.redis.url, prefix: core.keys.prefix });
    try {
      await mkdir(join(dataDir, 'raced'), { recursive: true });
      await core.projects.add(join(dataDir, 'raced'), { id: 'raced' }, 'user:test');
      const lost: number[] = [];
      for (let round = 0; round < 20; round++) {
        await core.projects.setTrusted('raced', true, 'user:test');
        await Promise.all([
          core.projects.setTrusted('raced', false, 'user:a'),
          other.projects.addLabels('raced', [`round-${round}`], 'user:b'),
        ]);
        const after = await core.projects.require('raced');
        if (after.trusted || !after.labels.includes(`round-${round}`)) lost.push(round);
      }
      expect(lost, 'rounds in which one of the two changes was lost').toEqual([]);
    } finally {
      await other.close();
    }
  });
});
