// Installing like a tool: `npm pack` of the built checkout, then `npm install
// -g` of the tarball into a fresh prefix (nothing of the clone on the way:
// another directory, the prefix's own node_modules). The installed
// `switchyard` answers --version and runs `up` to a healthy api, and the
// package's name is scoped, so npx or npm can never mistake an unrelated public
// package called `switchyard` for it. The release also puts `switchyard-plugin`
// (the SDK it bundles) on the PATH: a plugin author outside the clone writes a
// TypeScript, C and Python plugin with it — no registry serves the SDK — and
// the installed host discovers, trusts, enables and runs each.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { freePort } from '../support/redis.js';
import { waitFor } from '../cli/support.js';

const run = promisify(execFile);
let root = '';

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('npm link from the clone (the README)', () => {
  it('puts a switchyard that is this checkout on the PATH', async () => {
    const prefix = await mkdtemp(join(tmpdir(), 'switchyard-link-'));
    try {
      await run('npm', ['link', '--no-audit', '--no-fund'], {
        cwd: REPO,
        env: { ...process.env, npm_config_prefix: prefix, npm_config_update_notifier: 'false' },
      });
      const linked = join(prefix, 'bin', 'switchyard');
      expect(realpathSync(linked)).toBe(realpathSync(join(REPO, 'dist', 'cli', 'main.js')));
      const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
      expect((await run(linked, ['--version'])).stdout.trim()).toBe(pkg.version);
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });
});

interface Release {
  prefix: string;
  /** PATH with the release's bin first, HOME in the test's directory: nothing of the clone. */
  clean: Record<string, string>;
  version: string;
}

let release: Promise<Release> | undefined;

/** `npm pack` of the checkout, `npm install -g` of the tarball into a fresh prefix; once per file. */
function installRelease(): Promise<Release> {
  release ??= (async () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(pkg.name).toMatch(/^@[a-z0-9-]+\/[a-z0-9-]+$/);
    root = await mkdtemp(join(tmpdir(), 'switchyard-install-'));
    const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' };
    await run('npm', ['pack', '--pack-destination', root], { cwd: REPO, env: npmEnv, maxBuffer: 64 << 20 });
    const [tarball] = (await readdir(root)).filter((name) => name.endsWith('.tgz'));
    expect(tarball).toBe(`${pkg.name.slice(1).replace('/', '-')}-${pkg.version}.tgz`);
    const prefix = join(root, 'prefix');
    await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', join(root, tarball!)],
      { cwd: root, env: npmEnv, maxBuffer: 64 << 20, timeout: 240_000 },
    );
    return {
      prefix,
      clean: { PATH: `${join(prefix, 'bin')}:/usr/bin:/bin`, HOME: root },
      version: pkg.version,
    };
  })();
  return release;
}

/** `switchyard up` of the release on a fresh data dir, until /healthz answers; stop() ends it. */
async function upOf({ prefix, clean }: Release, dataDir: string) {
  const port = await freePort();
  const up = spawn(
    join(prefix, 'bin', 'switchyard'),
    ['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1'],
    {
      cwd: root,
      env: clean,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log = { output: '' };
  up.stdout.on('data', (chunk: Buffer) => (log.output += chunk.toString()));
  up.stderr.on('data', (chunk: Buffer) => (log.output += chunk.toString()));
  const stop = async () => {
    process.kill(-up.pid!, 'SIGTERM');
    await new Promise((resolve) => (up.exitCode !== null ? resolve(undefined) : up.once('exit', resolve)));
  };
  try {
    await waitFor(
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        await response?.arrayBuffer();
        return response?.status === 200 && log.output.includes('Switchyard is up');
      },
      60_000,
      `the installed up to answer /healthz on :${port}`,
      () => up.exitCode !== null,
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${log.output}`);
  }
  return { up, log, stop };
}

describe('npm pack, then npm install -g of the tarball', () => {
  it('installs a working switchyard: --version and up', async () => {
    const installed = await installRelease();
    const bin = join(installed.prefix, 'bin', 'switchyard');
    const version = await run(bin, ['--version'], { cwd: root, env: installed.clean });
    expect(version.stdout.trim()).toBe(installed.version);

    const { up, log, stop } = await upOf(installed, join(root, 'data'));
    try {
      // It runs the installed files, not the clone's.
      const command = readFileSync(`/proc/${up.pid}/cmdline`, 'utf8');
      expect(command).toContain(installed.prefix);
    } finally {
      await stop();
    }
    expect(log.output).toContain('Switchyard stopped');
  }, 300_000);

  it('switchyard-plugin from the release: a TypeScript, a C and a Python plugin each build, pass the kit and inspect a project', async () => {
    const installed = await installRelease();
    const { prefix, clean } = installed;
    const plugin = join(prefix, 'bin', 'switchyard-plugin');
    // The release's own command, from the SDK it bundles.
    expect(realpathSync(plugin)).toBe(
      realpathSync(
        join(
          prefix,
          'lib',
          'node_modules',
          '@switchyard',
          'host',
          'node_modules',
          '@switchyard',
          'plugin-sdk',
          'bin',
          'switchyard-plugin.js',
        ),
      ),
    );
    const work = join(root, 'plugins-src');
    await mkdir(work);
    // npm's own cache (this machine's), so esbuild and zod need not be downloaded again.
    const npmEnv = {
      ...clean,
      npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    const ids = { ts: 'release-ts', c: 'release-c', py: 'release-py' } as const;
    for (const [lang, id] of Object.entries(ids)) {
      const init = await run(plugin, ['init', id, '--lang', lang], { cwd: work, env: clean });
      expect(init.stdout).toContain(`wrote plugin ${id} (${lang})`);
    }
    // TypeScript: the SDK from the release itself (vendored by path), the rest from the registry.
    const tsDir = join(work, ids.ts);
    const tsPkg = JSON.parse(readFileSync(join(tsDir, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(tsPkg.devDependencies['@switchyard/plugin-sdk']).toMatch(/^file:/);
    await run('npm', ['install', '--prefer-offline'], {
      cwd: tsDir,
      env: npmEnv,
      maxBuffer: 64 << 20,
      timeout: 240_000,
    });
    expect(realpathSync(join(tsDir, 'node_modules', '@switchyard', 'plugin-sdk'))).toBe(
      join(tsDir, 'vendor', 'switchyard-plugin-sdk'),
    );
    await run('npm', ['run', 'build'], { cwd: tsDir, env: npmEnv, timeout: 120_000 });
    const tsKit = await run('npm', ['run', 'check'], { cwd: tsDir, env: npmEnv, timeout: 120_000 });
    expect(tsKit.stdout).toMatch(/^PASS {2}release-ts 0\.1\.0: /m);
    // C and Python: build.sh, then the kit of the release.
    for (const id of [ids.c, ids.py]) {
      const dir = join(work, id);
      await run(join(dir, 'build.sh'), [], { cwd: dir, env: clean });
      const kit = await run(plugin, ['conformance', 'dist'], { cwd: dir, env: clean });
      expect(kit.stdout).toMatch(new RegExp(`^PASS {2}${id} 0\\.1\\.0: \\d+ passed, 0 failed`, 'm'));
    }

    const dataDir = join(root, 'plugin-data');
    const { stop } = await upOf(installed, dataDir);
    try {
      const sy = (args: string[]) =>
        run(join(prefix, 'bin', 'switchyard'), ['--data-dir', dataDir, ...args], { cwd: root, env: clean });
      for (const id of Object.values(ids))
        await cp(join(work, id, 'dist'), join(dataDir, 'plugins', id), { recursive: true });
      const project = join(root, 'acme');
      await mkdir(project);
      await writeFile(join(project, 'README.md'), '# acme\n');
      await sy(['project', 'add', project, '--trust']);
      const listed = (await sy(['plugin', 'refresh'])).stdout;
      for (const id of Object.values(ids)) {
        expect(listed).toMatch(new RegExp(`^${id}\\s+0\\.1\\.0\\s+untrusted`, 'm'));
        const { fingerprint } = JSON.parse((await sy(['--json', 'plugin', 'show', id])).stdout) as {
          fingerprint: string;
        };
        await sy(['plugin', 'trust', id, '--fingerprint', fingerprint, '--yes']);
        const enabled = await sy([
          'plugin',
          'enable',
          id,
          '--scope',
          'project.metadata.read',
          '--scope',
          'project.files.read',
          '--yes',
        ]);
        expect(enabled.stdout).toContain('(health: healthy)');
        const inspected = await sy(['inspect', id, 'acme']);
        expect(inspected.stdout).toMatch(/^acme\s+succeeded\s/m);
        expect(inspected.stdout).toMatch(id === ids.c ? /inspected acme/ : /1 entries in acme/);
      }
    } finally {
      await stop();
    }
  }, 600_000);
});
