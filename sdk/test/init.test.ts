// switchyard-plugin init writes a plugin that passes the kit as written (TS:
// packed by switchyard-plugin-pack; C: built by its build.sh with cc), and
// the packager refuses a manifest other than the one the code imports.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = (name: string) => join(repo, 'sdk', 'bin', `${name}.js`);
const run = (cwd: string, command: string, args: string[]) =>
  spawnSync(
    command.endsWith('.js') ? process.execPath : command,
    command.endsWith('.js') ? [command, ...args] : args,
    {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sdk-init-'));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** What `npm install` gives the new project: the SDK (this checkout's) in its node_modules. */
async function linkSdk(dir: string): Promise<void> {
  await mkdir(join(dir, 'node_modules', '@switchyard'), { recursive: true });
  await symlink(join(repo, 'sdk'), join(dir, 'node_modules', '@switchyard', 'plugin-sdk'));
}

describe('switchyard-plugin init', () => {
  it('--lang ts: packs and passes the conformance kit as written', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'my-inspector']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/wrote plugin my-inspector \(ts\)/);
    const dir = join(root, 'my-inspector');
    await linkSdk(dir);
    const pack = run(dir, bin('switchyard-plugin-pack'), [
      'src/main.ts',
      '--manifest',
      'plugin.json',
      '--out',
      'dist',
    ]);
    expect(pack.status, pack.stderr).toBe(0);
    const kit = run(dir, bin('switchyard-plugin-conformance'), ['dist']);
    expect(kit.status, `${kit.stdout}\n${kit.stderr}`).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.build).toContain(
      'switchyard-plugin-pack',
    );
  });

  it('--lang c: build.sh compiles it and it passes the conformance kit', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'c-inspector', '--lang', 'c']);
    expect(init.status, init.stderr).toBe(0);
    const dir = join(root, 'c-inspector');
    const built = run(dir, join(dir, 'build.sh'), []);
    expect(built.status, built.stderr).toBe(0);
    const kit = run(dir, bin('switchyard-plugin-conformance'), ['dist']);
    expect(kit.status, `${kit.stdout}\n${kit.stderr}`).toBe(0);
    expect(readFileSync(join(dir, 'c-inspector.c'), 'utf8')).not.toContain('native-fixture');
  });

  it('refuses a directory that is not empty, a bad id and an unknown language (exit 2), writing nothing', async () => {
    const busy = join(root, 'busy');
    await mkdir(busy);
    await writeFile(join(busy, 'keep.txt'), 'mine');
    const full = run(root, bin('switchyard-plugin'), ['init', 'busy']);
    expect(full.status).toBe(2);
    expect(full.stderr).toMatch(/is not empty/);
    expect(readFileSync(join(busy, 'keep.txt'), 'utf8')).toBe('mine');
    const badId = run(root, bin('switchyard-plugin'), ['init', 'Bad_Name']);
    expect(badId.status).toBe(2);
    expect(badId.stderr).toMatch(/not a plugin id.*--id/);
    expect(existsSync(join(root, 'Bad_Name'))).toBe(false);
    const lang = run(root, bin('switchyard-plugin'), ['init', 'x-plugin', '--lang', 'go']);
    expect(lang.status).toBe(2);
    expect(lang.stderr).toMatch(/--lang must be ts or c/);
  });
});

describe('switchyard-plugin-pack and the manifest the code imports', () => {
  it('refuses --manifest plugin-next.json when the code imports ../plugin.json, writing nothing', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'next-inspector']);
    expect(init.status, init.stderr).toBe(0);
    const dir = join(root, 'next-inspector');
    await linkSdk(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(dir, 'plugin-next.json'), JSON.stringify({ ...manifest, version: '0.2.0' }));
    const pack = run(dir, bin('switchyard-plugin-pack'), [
      'src/main.ts',
      '--manifest',
      'plugin-next.json',
      '--out',
      'dist',
    ]);
    expect(pack.status).toBe(1);
    expect(pack.stderr).toContain(`the code imports ${join(dir, 'plugin.json')}`);
    expect(pack.stderr).toContain(`${join(dir, 'plugin-next.json')} (version)`);
    expect(existsSync(join(dir, 'dist'))).toBe(false);
    // The same manifest, bytes laid out differently, is the same identity: packed.
    await writeFile(join(dir, 'plugin-same.json'), JSON.stringify(manifest));
    const same = run(dir, bin('switchyard-plugin-pack'), [
      'src/main.ts',
      '--manifest',
      'plugin-same.json',
      '--out',
      'dist',
    ]);
    expect(same.status, same.stderr).toBe(0);
  });
});
