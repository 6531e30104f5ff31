// Attacks on the reviewed package and its verified copy (docs/PROTOCOL.md §3,
// §4, §9.3; docs/adr/0009-run-from-a-verified-package-copy.md), each with real
// files, real plugins and (as root) real bind mounts: a chain of symlinks
// whose text stays inside but which the kernel resolves outside; a run
// directory another user may write; a name that is not UTF-8; a FIFO; more
// files than a first-in-first-out hash cache held; a file holding more bytes
// than its size says; a project root flipped between two directories while its
// lock is named.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { filesHashed, readPackageTree, type PackageTree } from '../../src/core/plugins/package-tree.js';
import { verifiedCopy } from '../../src/core/plugins/package-copy.js';
import { lockNameOfRealPath } from '../../src/core/projects/project-lock.js';
import { trustAndEnable, useCoreSuite } from '../support/core-suite.js';
import { manifestFields } from '../support/manifest.js';

const isRoot = process.getuid?.() === 0;
const mounts: string[] = [];
afterAll(() => {
  for (const mountpoint of mounts.reverse()) execFileSync('umount', [mountpoint]);
});
/** Undone before the suite removes its data dir (a mount point cannot be removed). */
function unmount(mountpoint: string) {
  execFileSync('umount', [mountpoint]);
  mounts.splice(mounts.indexOf(mountpoint), 1);
}

const PYTHON = `#!/usr/bin/env python3
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "plugin.json"), encoding="utf-8") as f:
    manifest = json.load(f)
identity = {k: v for k, v in manifest.items() if k not in ("executable", "arguments")}
for line in sys.stdin:
    message = json.loads(line)
    ident, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": "switchyard.plugin/v1", "plugin": identity,
                  "grantedScopes": params.get("grantedScopes", [])}
    else:
        result = {"status": "healthy", "message": "ok", "checkedAt": "2024-01-01T00:00:00Z"}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\\n")
    sys.stdout.flush()
`;

/** <plugins>/<id>: plugin.json and main.py (0755), the package's other files made by `extra`. */
async function writePackage(plugins: string, id: string, extra: (dir: string) => Promise<void> | void) {
  const dir = join(plugins, id);
  await mkdir(dir, { recursive: true });
  const fields = manifestFields(id, { executable: 'main.py', capabilities: ['project.inspect'] });
  await writeFile(join(dir, 'plugin.json'), JSON.stringify(fields), { mode: 0o644 });
  await writeFile(join(dir, 'main.py'), PYTHON, { mode: 0o755 });
  await extra(dir);
  return dir;
}

describe('what a package may hold', () => {
  const suite = useCoreSuite('package-tree-attacks');
  let core: Core;
  beforeAll(() => void ({ core } = suite));

  it('a chain of symlinks that reads as inside but resolves outside is refused; a link inside is listed with its target', async () => {
    const elsewhere = join(suite.dataDir, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'helper.py'), 'WORD = "never reviewed"\n');
    const dir = await writePackage(suite.plugins, 'chain', async (dir) => {
      // d -> . ; u1 -> d/.. (the plugins dir) ; u2 -> u1/.. (the data dir): each text stays inside.
      await symlink('.', join(dir, 'd'));
      await symlink('d/..', join(dir, 'u1'));
      await symlink('u1/..', join(dir, 'u2'));
      await symlink('u2/elsewhere/helper.py', join(dir, 'helper.py'));
    });
    await writePackage(suite.plugins, 'linked', async (dir) => {
      await writeFile(join(dir, 'real.py'), 'WORD = 1\n', { mode: 0o644 });
      await symlink('real.py', join(dir, 'alias.py'));
    });
    await core.plugins.refresh('user:test');
    const chain = await core.plugins.show('chain');
    expect(chain.available).toBe(false);
    expect(chain.error).toContain(
      `the symlink ${join(dir, 'helper.py')} points outside the package (u2/elsewhere/helper.py, which resolves to ${join(elsewhere, 'helper.py')})`,
    );
    const linked = await core.plugins.show('linked');
    expect(linked.available).toBe(true);
    expect(linked.files).toContainEqual({
      path: 'alias.py',
      type: 'symlink',
      mode: '0777',
      size: 0,
      target: 'real.py',
    });
  });

  it('a name that is not UTF-8 is refused, naming the directory (not decoded to a name that hides it)', async () => {
    const dir = await writePackage(suite.plugins, 'latin', (dir) => {
      mkdirSync(join(dir, 'lib'));
      // "f\xff.py" decodes to the same string as the valid UTF-8 name "f\uFFFD.py" beside it.
      writeFileSync(
        Buffer.concat([Buffer.from(`${dir}/lib/f`), Buffer.from([0xff]), Buffer.from('.py')]),
        'X = 1\n',
      );
      writeFileSync(join(dir, 'lib', 'f\uFFFD.py'), 'X = 2\n');
    });
    await core.plugins.refresh('user:test');
    const latin = await core.plugins.show('latin');
    expect(latin.available).toBe(false);
    expect(latin.error).toContain(`the directory ${join(dir, 'lib')} holds a name that is not valid UTF-8`);
  });

  it('a FIFO makes its own package unavailable, with the reason, and no other', async () => {
    const dir = await writePackage(
      suite.plugins,
      'piped',
      (dir) => void execFileSync('mkfifo', [join(dir, 'pipe')]),
    );
    await writePackage(suite.plugins, 'plain', () => undefined);
    await core.plugins.refresh('user:test');
    expect(await core.plugins.show('piped')).toMatchObject({
      available: false,
      error: expect.stringContaining(
        `${join(dir, 'pipe')} is a FIFO (named pipe): a package holds only files`,
      ),
    });
    expect((await core.plugins.show('plain')).available).toBe(true);
  });
});

describe('the run directory of verified copies passes the owner rule', () => {
  const suite = useCoreSuite('package-tree-run-root');
  let core: Core;
  beforeAll(() => void ({ core } = suite));

  it('made 0700 when missing; world-writable, no call starts and the error names it', async () => {
    await writePackage(suite.plugins, 'runs', () => undefined);
    await trustAndEnable(core, 'runs', ['project.metadata.read']);
    expect((await core.plugins.health('runs')).status).toBe('healthy');
    const run = join(suite.dataDir, 'run');
    expect((await stat(run)).mode & 0o777).toBe(0o700);
    expect((await stat(join(run, 'packages'))).mode & 0o777).toBe(0o700);
    await chmod(run, 0o777);
    await expect(core.plugins.health('runs')).rejects.toMatchObject({
      message: expect.stringContaining(
        `the directory of verified package copies ${join(run, 'packages')} cannot be trusted: the directory ${run} is world-writable (chmod o-w it)`,
      ),
    });
    await chmod(run, 0o700);
    expect((await core.plugins.health('runs')).status).toBe('healthy');
  });
});

describe('reads stop at the size that was stamped', () => {
  const suite = useCoreSuite('package-tree-reads');

  it('more files than the old first-in-first-out cache held are hashed once, then taken from the cache', async () => {
    const dirs: string[] = [];
    for (let p = 0; p < 21; p++) {
      const dir = join(suite.dataDir, 'many', `p${p}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 999; f++) writeFileSync(join(dir, `f${f}`), `${p}:${f}`);
      dirs.push(dir);
    }
    await new Promise((done) => setTimeout(done, 2_200)); // older than the racy window: cacheable
    for (const dir of dirs) expect((await readPackageTree(dir)).ok).toBe(true);
    const before = filesHashed();
    for (const dir of dirs) expect((await readPackageTree(dir)).ok).toBe(true);
    expect(filesHashed() - before).toBe(0);
  }, 120_000);

  it.skipIf(!isRoot)(
    'a file holding more than its size says is refused, by the tree and by the copy',
    async () => {
      const dir = join(suite.dataDir, 'procfile');
      await mkdir(dir);
      await writeFile(join(dir, 'data.txt'), '');
      await chmod(join(dir, 'data.txt'), 0o444);
      execFileSync('mount', ['--bind', '/proc/version', join(dir, 'data.txt')]);
      mounts.push(join(dir, 'data.txt'));
      try {
        const read = await readPackageTree(dir);
        expect(read.ok).toBe(false);
        expect(!read.ok && read.error).toContain(`holds more than the 0 bytes its size says`);
        // The copy on its own: given the tree as if it had passed, it copies no more than the stamped 0 bytes.
        const content = await readFile(join(dir, 'data.txt'));
        const stamps = new Map([
          ['.', lstatSync(dir, { bigint: true })],
          ['data.txt', lstatSync(join(dir, 'data.txt'), { bigint: true })],
        ]);
        const tree: PackageTree = {
          digest: 'a'.repeat(64),
          entries: [
            { path: '.', type: 'directory', mode: '0755', size: 0 },
            {
              path: 'data.txt',
              type: 'file',
              mode: '0444',
              size: content.length,
              sha256: createHash('sha256').update(content).digest('hex'),
            },
          ],
          stamps,
        };
        await expect(verifiedCopy(join(suite.dataDir, 'run', 'packages'), dir, tree)).rejects.toThrow(
          `the package file ${join(dir, 'data.txt')} holds more than the 0 bytes it had when verified`,
        );
      } finally {
        unmount(join(dir, 'data.txt'));
      }
    },
  );
});

describe.skipIf(!isRoot)('a project root flipped between two directories names a consistent lock', () => {
  const suite = useCoreSuite('package-tree-lock');
  let core: Core;
  beforeAll(() => void ({ core } = suite));

  it('the lock is named after the directory whose identity was compared, never the other', async () => {
    const [dirA, dirB, aliasB, flip] = ['dir-a', 'dir-b', 'alias-b', 'flip'].map((n) =>
      join(suite.dataDir, n),
    );
    for (const path of [dirA, dirB, aliasB, flip]) await mkdir(path!);
    execFileSync('mount', ['--bind', dirB!, aliasB!]);
    mounts.push(aliasB!);
    // "a" over the bind mount of B (its lowest id names B's lock); "z" over a directory that then flips.
    await core.projects.add(aliasB!, { id: 'a', trust: true }, 'user:test');
    const z = await core.projects.add(flip!, { id: 'z', trust: true }, 'user:test');
    execFileSync('rmdir', [flip!]);
    const flipper = spawn(process.execPath, [
      '-e',
      `const fs = require('node:fs');
       const [a, b, at] = ${JSON.stringify([dirA, dirB, flip])};
       for (let i = 0; ; i++) { const tmp = at + '.tmp'; fs.rmSync(tmp, { force: true }); fs.symlinkSync(i % 2 ? a : b, tmp); fs.renameSync(tmp, at); }`,
    ]);
    try {
      while (!existsSync(flip!)) await new Promise((done) => setTimeout(done, 10));
      const allowed = new Set([lockNameOfRealPath(dirA!), lockNameOfRealPath(aliasB!)]);
      const names = new Set<string>();
      for (let i = 0; i < 400; i++) names.add(await core.projects.lockNameOf(z));
      // dir-b's own real path names no lock "z" could share with "a": that would split the lock.
      expect(names.has(lockNameOfRealPath(dirB!))).toBe(false);
      expect([...names].filter((name) => !allowed.has(name))).toEqual([]);
    } finally {
      flipper.kill();
      unmount(aliasB!);
    }
  }, 30_000);
});
