// One directory is one project whatever path names it: a bind mount of a
// registered root (same device and inode, another path) is refused at
// registration, and two ids registered over one directory before that
// (older data) share one operation lock, so their operations never overlap.
// Real bind mounts (root only) in a directory of the test's, undone in afterAll.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, readLines, startWorker } from '../support/workers.js';

const suite = useQueueSuite('4-one-directory');
const { report } = suite;
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('one-directory suite skipped: mount --bind needs root');

const mounts: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const mountpoint of mounts) execFileSync('umount', [mountpoint]);
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A directory and a bind mount of it at another path. */
async function boundPair(): Promise<{ real: string; alias: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'sy-one-directory-'));
  dirs.push(dir);
  const real = join(dir, 'shop');
  const alias = join(dir, 'shop-alias');
  await mkdir(real);
  await mkdir(alias);
  execFileSync('mount', ['--bind', real, alias]);
  mounts.push(alias);
  return { real, alias };
}

describe.skipIf(!isRoot)('one directory under two paths (a bind mount)', () => {
  it('registering the bind mount under another id is refused, naming the project', async () => {
    const { runtime } = await suite.install('bind-add');
    const { real, alias } = await boundPair();
    await runtime.projects.add(real, { trust: true }, ACTOR);
    await expect(runtime.projects.add(alias, { trust: true }, ACTOR)).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining(`is already project shop (the same directory as ${real})`),
    });
    expect((await runtime.projects.list()).map((project) => project.id)).toEqual(['shop']);
  });

  it('two ids registered over it before (older data): their operations on two workers never overlap', async () => {
    const installation = await suite.install('bind-lock');
    const { runtime } = installation;
    const { real, alias } = await boundPair();
    await runtime.projects.add(real, { trust: true }, ACTOR);
    // As a registry written before aliases were refused holds it.
    const twin = { id: 'shop-alias', displayName: 'shop-alias', root: alias, trusted: true, labels: [] };
    await runtime.redis.hset(runtime.keys.projects, twin.id, JSON.stringify(twin));
    // Concurrency 1 each: each worker takes one of the two jobs, only the project lock can serialize them.
    await Promise.all([
      startWorker(installation, { concurrency: 1 }),
      startWorker(installation, { concurrency: 1 }),
    ]);
    const submitted = await Promise.all(
      ['shop', 'shop-alias'].map((projectId) =>
        runtime.operations.create(
          {
            pluginId: PLUGIN_ID,
            projectId,
            action: 'append',
            input: { append: projectId, recordTimes: true, sleepMs: 1_500 },
          },
          ACTOR,
        ),
      ),
    );
    const finals = await Promise.all(
      submitted.map(({ operation }) =>
        runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(30_000), pollMs: 50 }),
      ),
    );
    const intervals = (await readLines(join(real, 'operations.log'))).map((line) => {
      const match = /^(\S+) start=(\d+) end=(\d+)$/.exec(line)!;
      return { name: match[1]!, start: Number(match[2]), end: Number(match[3]) };
    });
    const [first, second] = [...intervals].sort((a, b) => a.start - b.start);
    const gapMs = second!.start - first!.end;
    report.add(
      'two operations submitted together, one on a project and one on an id registered over a bind mount of its root',
      'both succeed; the plugin-recorded [start, end] intervals never overlap',
      `${finals.map((final) => final.state).join(', ')}; second started ${gapMs} ms after the first ended`,
    );
    expect(finals.map((final) => final.state)).toEqual(['succeeded', 'succeeded']);
    expect(intervals).toHaveLength(2);
    expect(gapMs).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
