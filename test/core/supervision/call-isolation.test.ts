// Per-call isolation (docs/PROTOCOL.md §11), with real calls of a confined
// plugin that tries to pass data outside the protocol: a writer call on one
// project and a reader call on another share nothing through SysV shared
// memory, message queues, semaphores, POSIX message queues or keys; a 0600
// segment and a key the host's user (root) made are neither readable nor
// removable from a call; no call can create a namespace (so it holds no
// capability in one); what a call writes in its TMPDIR is bounded by its disk
// budget, past which it fails RESOURCE_LIMIT naming the disk and its files are
// gone; /sys/fs/cgroup is not readable; the host's files outside the call's
// write paths are read-only to it (no chmod, chown, utimes or setxattr, which
// Landlock does not govern), while an operation still writes its project; no
// datagram reaches a host socket by path. The programs are
// test/fixtures/ipc-probe.c, built here with cc.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMESPACES_ENV, containment } from '../../../src/core/supervision/containment.js';
import { HELPER_PATH, Spawner } from '../../../src/core/supervision/spawner.js';
import type { ConfinementSettings } from '../../../src/core/plugins/confinement-settings.js';
import { trustAndEnable, useCoreSuite } from '../../support/core-suite.js';
import { REPO } from '../../support/data-dir.js';
import { installFixturePackage } from '../../support/manifest.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'confined-plugin.mjs');
const PROBE_SOURCE = join(REPO, 'test', 'fixtures', 'ipc-probe.c');
const ACTOR = 'user:test';
const SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const state = containment();
const isolated = state.enforced.some((item) => item.startsWith('per-call IPC namespace'));
const seccomp = state.enforced.some((item) => item.startsWith('seccomp'));
const MIB = 1024 ** 2;

const suite = useCoreSuite('call-isolation');
let serial = 0;
let probe: string;
/** Tags of IPC objects a call may have left on the host (only when isolation failed): removed at the end. */
const tags: string[] = [];

type Attempt = Record<string, string | number | boolean | (string | number)[]>;

beforeAll(async () => {
  for (const id of ['p1', 'p3']) {
    const root = join(suite.dataDir, 'projects', id);
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'README'), `${id}'s README\n`);
    await suite.core.projects.add(root, { id, trust: true }, ACTOR);
  }
  probe = join(suite.dataDir, 'ipc-probe');
  execFileSync('cc', ['-O1', '-o', probe, PROBE_SOURCE]);
});
afterAll(() => {
  for (const tag of tags) execFileSync(probe, ['cleanup', tag]);
});

async function hostilePlugin(settings: ConfinementSettings = { network: 'none' }) {
  const id = `isolated-${++serial}`;
  const dir = await installFixturePackage(join(suite.plugins, id), FIXTURE, {
    id,
    name: 'Hostile plugin',
    executable: 'confined-plugin.mjs',
    arguments: [],
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: SCOPES,
  });
  await trustAndEnable(suite.core, id, SCOPES, ACTOR, settings);
  // In its package directory, which a call may read and run.
  await copyFile(probe, join(dir, 'ipc-probe'));
  return { id, dir, probe: join(dir, 'ipc-probe') };
}

async function operate(plugin: { id: string }, project: string, attempts: Attempt[]): Promise<string[]> {
  const result = await suite.core.plugins.operate(plugin.id, project, 'try', { attempts });
  return (result.output as { results: string[] }).results;
}

/** `name=result` words of one probe run, as an object. */
function words(line: string): Record<string, string> {
  return Object.fromEntries(
    line
      .replace(/^ok: /, '')
      .split(' ')
      .filter(Boolean)
      .map((word) => word.split('=') as [string, string]),
  );
}

describe.skipIf(!isolated)('nothing passes between calls outside the protocol', () => {
  it('a writer call on p1 and a reader call on p3 share no shm, msg, sem, mq or key', async () => {
    const plugin = await hostilePlugin();
    const tag = `t${process.pid}-${serial}`;
    tags.push(tag);
    const [written] = await operate(plugin, 'p1', [{ run: [plugin.probe, 'write', tag, "p1's README"] }]);
    // Written in its own namespace (the key refused outright; Landlock's file rules may refuse to make
    // the queue's inode in the mqueue filesystem, where the IPC namespace would keep it to the call anyway).
    expect(words(written!)).toEqual({
      shm: 'ok',
      msg: 'ok',
      sem: 'ok',
      mq: expect.stringMatching(/^(ok|EACCES)$/),
      key: 'EPERM',
    });
    const [read] = await operate(plugin, 'p3', [{ run: [plugin.probe, 'read', tag] }]);
    expect(words(read!)).toEqual({ shm: 'ENOENT', msg: 'ENOENT', sem: 'ENOENT', mq: 'ENOENT', key: 'EPERM' });
    // Nor did any of it reach the host's namespace.
    expect(words(execFileSync(probe, ['read', tag], { encoding: 'utf8' }))).toEqual({
      shm: 'ENOENT',
      msg: 'ENOENT',
      sem: 'ENOENT',
      mq: 'ENOENT',
      key: 'ENOKEY',
    });
  }, 30_000);

  it("a 0600 segment and a key of the host's user are neither readable nor removable from a call", async () => {
    const plugin = await hostilePlugin();
    const segment = execFileSync(probe, ['shm-make', 'host secret'], { encoding: 'utf8' }).trim();
    const key = execFileSync(probe, ['key-add', `sy-host-${process.pid}`, 'host key'], {
      encoding: 'utf8',
    }).trim();
    try {
      const results = await operate(plugin, 'p1', [
        { run: [plugin.probe, 'shm-read', segment] },
        { run: [plugin.probe, 'shm-remove', segment] },
        { run: [plugin.probe, 'key-read', key] },
        { run: [plugin.probe, 'key-unlink', key] },
      ]);
      expect(results.map((line) => words(line))).toEqual([
        { 'shm-read': 'EINVAL' },
        { 'shm-remove': 'EINVAL' },
        { 'key-read': 'EPERM' },
        { 'key-unlink': 'EPERM' },
      ]);
      // Both still there, as the host left them.
      expect(execFileSync(probe, ['shm-read', segment], { encoding: 'utf8' })).toContain('host secret');
      expect(execFileSync(probe, ['key-read', key], { encoding: 'utf8' })).toContain('host key');
    } finally {
      execFileSync(probe, ['shm-remove', segment]);
      execFileSync(probe, ['key-unlink', key]);
    }
  }, 30_000);

  it('a call cannot create a namespace: unshare, clone and clone3 with CLONE_NEWUSER, setns', async () => {
    const plugin = await hostilePlugin();
    const [line] = await operate(plugin, 'p1', [{ run: [plugin.probe, 'namespaces'] }]);
    expect(words(line!)).toEqual({
      'unshare-user': 'EPERM',
      'unshare-mount': 'EPERM',
      'unshare-ipc': 'EPERM',
      'clone-user': 'EPERM',
      'clone3-user': 'ENOSYS',
      setns: 'EPERM',
    });
  }, 30_000);

  it("/sys/fs/cgroup is not readable: not other calls' cgroups, not other installations'", async () => {
    const plugin = await hostilePlugin();
    const results = await operate(plugin, 'p1', [
      { list: '/sys/fs/cgroup' },
      { list: '/sys/fs/cgroup/memory' },
      { list: '/sys/fs/cgroup/pids' },
    ]);
    expect(results).toEqual(['EACCES', 'EACCES', 'EACCES']);
  }, 30_000);
});

describe.skipIf(!isolated)("the host's files outside the write paths are read-only to a call", () => {
  it('no chmod, chown, utimes or setxattr of a file outside every rule; an operation still writes its project', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sy-host-files-'));
    try {
      // The worker's own file (root's, when run as root): what a plugin running as it owns.
      const file = join(dir, 'host-program');
      await writeFile(file, '#!/bin/sh\n');
      await chmod(file, 0o644);
      const before = await stat(file);
      const plugin = await hostilePlugin();
      const root = join(suite.dataDir, 'projects', 'p1');
      await mkdir(join(root, 'nested'), { recursive: true });
      const [metadata, written, nested, outside] = await operate(plugin, 'p1', [
        { run: [plugin.probe, 'metadata', file] },
        { write: join(root, 'operated') },
        { write: join(root, 'nested', 'operated') },
        { write: join(dir, 'planted') },
      ]);
      expect(words(metadata!)).toEqual({
        chmod: 'EROFS',
        chown: 'EROFS',
        utimes: 'EROFS',
        setxattr: 'EROFS',
      });
      const after = await stat(file);
      expect([after.mode & 0o7777, after.uid, after.gid, after.mtimeMs]).toEqual([
        0o644,
        before.uid,
        before.gid,
        before.mtimeMs,
      ]);
      // Its project, on its own writable mount in the call's namespace, where Landlock's rule still holds.
      expect([written, nested]).toEqual(['ok', 'ok']);
      expect(await readFile(join(root, 'nested', 'operated'), 'utf8')).toBe('written by confined-plugin\n');
      expect(outside).toMatch(/^(EACCES|EROFS)$/);
      expect(await readdir(dir)).toEqual(['host-program']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe.skipIf(!isolated)('write paths an admin listed for several hosts', () => {
  it('an --allow-write path missing on this host does not stop the call; the one present is writable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sy-write-paths-'));
    try {
      const present = join(dir, 'present');
      await mkdir(present);
      const missing = join(dir, 'on-another-host');
      const plugin = await hostilePlugin({ network: 'none', allowWrite: [missing, present] });
      const [written, created] = await operate(plugin, 'p1', [
        { write: join(present, 'written') },
        { write: join(missing, 'created') },
      ]);
      expect(written).toBe('ok');
      expect(created).toMatch(/^(ENOENT|EACCES|EROFS)$/);
      expect(await readdir(dir)).toEqual(['present']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe.skipIf(!seccomp)('no unix socket by path, not even a datagram from a socketpair', () => {
  it.each(['none', 'allow'] as const)(
    'with network %s a call makes stream and seqpacket pairs, no datagram pair, and reaches no host socket',
    async (network) => {
      const dir = await mkdtemp(join(tmpdir(), 'sy-host-socket-'));
      const path = join(dir, 'log.sock');
      const receiver = spawn(probe, ['dgram-recv', path, '20000'], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        let said = '';
        receiver.stdout.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
        while (!said.includes('ready')) await once(receiver.stdout, 'data');
        const plugin = await hostilePlugin({ network });
        const [line] = await operate(plugin, 'p1', [{ run: [plugin.probe, 'pairs', path] }]);
        expect(words(line!)).toEqual({
          'pair-stream': 'ok',
          'pair-seqpacket': 'ok',
          'pair-dgram': 'EACCES',
          'pair-raw': 'EACCES',
        });
        // The host's own datagram is the first the socket gets.
        execFileSync(probe, ['pairs', path, 'host-marker']);
        if (receiver.exitCode === null) await once(receiver, 'exit');
        expect(said).toMatch(/got=host-marker/);
      } finally {
        receiver.kill();
        await rm(dir, { recursive: true, force: true });
      }
    },
    30_000,
  );
});

describe.skipIf(!isolated)('a disk budget per call', () => {
  /** Files in every scratch directory of this process (the host's view of them). */
  async function scratchFiles(): Promise<string[]> {
    const found: string[] = [];
    for (const name of await readdir(tmpdir())) {
      if (!name.startsWith('sy-call-')) continue;
      const tmp = join(tmpdir(), name, 'tmp');
      found.push(...(await readdir(tmp).catch(() => [])).map((file) => join(tmp, file)));
    }
    return found;
  }

  it('a call that writes past its budget fails RESOURCE_LIMIT naming the disk, and its files are gone', async () => {
    const plugin = await hostilePlugin({ network: 'none', diskBytes: 32 * MIB });
    // 4 files of 16 MiB: each under the file-size limit, 64 MiB in all.
    const over = operate(plugin, 'p1', [{ tmpfiles: [4, 16] }, { tmpState: true }]);
    await expect(over).rejects.toMatchObject({ code: 'RESOURCE_LIMIT', limits: ['disk'] });
    await expect(over).rejects.toThrow(/the disk limit of 32 MiB/);
    expect(await scratchFiles()).toEqual([]);
    // The next call on the same plugin finds an empty TMPDIR.
    const [after] = await operate(plugin, 'p1', [{ tmpState: true }]);
    expect(after).toMatch(/, 0 entries$/);
  }, 30_000);

  it('within the budget the call succeeds, and the next call does not see its files', async () => {
    const plugin = await hostilePlugin({ network: 'none', diskBytes: 32 * MIB });
    const [wrote, seen] = await operate(plugin, 'p1', [{ tmpfiles: [2, 8] }, { tmpState: true }]);
    expect(wrote).toMatch(/^ok: 16 MiB/);
    expect(seen).toMatch(/, 2 entries$/);
    const [after] = await operate(plugin, 'p3', [{ tmpState: true }]);
    expect(after).toMatch(/, 0 entries$/);
  }, 30_000);

  it('a call with a TMPDIR but no disk budget does not start (the host would say a budget holds)', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'sy-no-budget-'));
    await mkdir(join(scratch, 'tmp'));
    const spawner = new Spawner(HELPER_PATH, () => {});
    try {
      const limits = {
        memoryBytes: 0,
        cpuSeconds: 0,
        fileSizeBytes: 0,
        openFiles: 0,
        processes: 0,
        diskBytes: 0,
      };
      const call = await spawner.spawn({
        file: '/bin/true',
        args: [],
        cwd: '/',
        env: {},
        confine: true,
        isolate: true,
        policy: { network: 'allow', limits, tmp: join(scratch, 'tmp') },
      });
      await expect(call.started).rejects.toThrow(/EINVAL|Invalid argument/);
      await call.end();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('a file stopped at the file-size limit in the tmpfs is still named (the keeper looks, not the host)', async () => {
    const plugin = await hostilePlugin({ network: 'none', fileSizeBytes: 4 * MIB, diskBytes: 64 * MIB });
    const over = operate(plugin, 'p1', [{ tmpfile: 8 }]);
    await expect(over).rejects.toMatchObject({ code: 'RESOURCE_LIMIT', limits: ['file size'] });
  }, 30_000);
});

it('says per host whether calls are isolated; with SWITCHYARD_CALL_NAMESPACES=off, that they are not', () => {
  const said = [...state.enforced, ...state.missing].join('\n');
  expect(said).toMatch(/per-call IPC namespace/);
  expect(said).toMatch(/disk budget/);
  if (state.mechanism !== 'subreaper') return;
  process.env[NAMESPACES_ENV] = 'off';
  try {
    const missing = containment().missing.join('\n');
    expect(missing).toMatch(/per-call IPC namespace \(SWITCHYARD_CALL_NAMESPACES=off\)/);
    expect(missing).toMatch(/disk budget \(SWITCHYARD_CALL_NAMESPACES=off\)/);
    expect(missing).toMatch(
      /read-only file system outside the granted write paths \(SWITCHYARD_CALL_NAMESPACES=off\): a plugin can change the mode, owner and times of files its user owns/,
    );
  } finally {
    delete process.env[NAMESPACES_ENV];
  }
});
