// switchyard-plugin init writes a plugin that passes the kit as written (TS:
// packed by switchyard-plugin pack; C and Python: built by their build.sh), and
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

describe('the switchyard-plugin command in the repository (sdk/README.md §0)', () => {
  it('the lock file records every bin of the sdk workspace, so npm ci links them', () => {
    const sdkBins = JSON.parse(readFileSync(join(repo, 'sdk', 'package.json'), 'utf8')).bin as Record<
      string,
      string
    >;
    const locked = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')).packages.sdk
      .bin as Record<string, string>;
    expect(Object.keys(locked).sort()).toEqual(Object.keys(sdkBins).sort());
  });

  it('npx --no-install switchyard-plugin runs the command of this checkout (no registry)', () => {
    const help = spawnSync('npx', ['--no-install', 'switchyard-plugin', '--help'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
    });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('usage: switchyard-plugin init <dir> [--lang ts|c|py]');
  });
});

describe('switchyard-plugin init', () => {
  it('--lang ts: packs and passes the conformance kit as written', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'my-inspector']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/wrote plugin my-inspector \(ts\)/);
    const dir = join(root, 'my-inspector');
    // The SDK by a path to its own copy, never by a name a registry could serve (issue: 404, or a stranger's).
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.devDependencies['@switchyard/plugin-sdk']).toBe('file:vendor/switchyard-plugin-sdk');
    const vendored = join(dir, 'vendor', 'switchyard-plugin-sdk');
    expect(JSON.parse(readFileSync(join(vendored, 'package.json'), 'utf8')).name).toBe(
      '@switchyard/plugin-sdk',
    );
    expect(existsSync(join(vendored, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(vendored, 'bin', 'switchyard-plugin.js'))).toBe(true);
    expect(pkg.scripts.build).toBe('switchyard-plugin pack src/main.ts --manifest plugin.json --out dist');
    expect(pkg.scripts.check).toBe('switchyard-plugin conformance dist');
    await linkSdk(dir);
    const pack = run(dir, bin('switchyard-plugin'), pkg.scripts.build!.split(' ').slice(1));
    expect(pack.status, pack.stderr).toBe(0);
    const kit = run(dir, bin('switchyard-plugin'), pkg.scripts.check!.split(' ').slice(1));
    expect(kit.status, `${kit.stdout}\n${kit.stderr}`).toBe(0);
    expect(kit.stdout).toMatch(/^PASS {2}my-inspector 0\.1\.0: /m);
  });

  it('--lang py: a standard-library Python plugin that build.sh installs passes the kit, strict checks too', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'py-inspector', '--lang', 'py']);
    expect(init.status, init.stderr).toBe(0);
    const dir = join(root, 'py-inspector');
    expect(init.stdout).toContain(`${bin('switchyard-plugin')} conformance dist`);
    const built = run(dir, join(dir, 'build.sh'), []);
    expect(built.status, built.stderr).toBe(0);
    const kit = run(dir, bin('switchyard-plugin'), ['conformance', 'dist', '--strict']);
    expect(kit.status, `${kit.stdout}\n${kit.stderr}`).toBe(0);
    expect(kit.stdout).toMatch(/^PASS {2}py-inspector 0\.1\.0: \d+ passed, 0 failed, 3 skipped$/m);
    expect(readFileSync(join(dir, 'py-inspector.py'), 'utf8')).not.toContain('{{id}}');
  });

  it('--lang c: build.sh compiles it and it passes the conformance kit', async () => {
    const init = run(root, bin('switchyard-plugin'), ['init', 'c-inspector', '--lang', 'c']);
    expect(init.status, init.stderr).toBe(0);
    const dir = join(root, 'c-inspector');
    const built = run(dir, join(dir, 'build.sh'), []);
    expect(built.status, built.stderr).toBe(0);
    const kit = run(dir, bin('switchyard-plugin'), ['conformance', 'dist']);
    expect(kit.status, `${kit.stdout}\n${kit.stderr}`).toBe(0);
    const source = readFileSync(join(dir, 'c-inspector.c'), 'utf8');
    expect(source).not.toContain('native-fixture');
    expect(source).not.toMatch(/native fixture/i);
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
    expect(lang.stderr).toMatch(/--lang must be ts, c or py/);
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
