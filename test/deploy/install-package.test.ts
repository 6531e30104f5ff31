// Installing like a tool: `npm pack` of the built checkout, then `npm install
// -g` of the tarball into a fresh prefix (nothing of the clone on the way:
// another directory, the prefix's own node_modules). The installed
// `switchyard` answers --version and runs `up` to a healthy api, and the
// package's name is scoped, so npx or npm can never mistake an unrelated public
// package called `switchyard` for it.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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

describe('npm pack, then npm install -g of the tarball', () => {
  it('installs a working switchyard: --version and up', async () => {
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
    const bin = join(prefix, 'bin', 'switchyard');
    const clean = { PATH: `${join(prefix, 'bin')}:/usr/bin:/bin`, HOME: root };
    const version = await run(bin, ['--version'], { cwd: root, env: clean });
    expect(version.stdout.trim()).toBe(pkg.version);

    const port = await freePort();
    const dataDir = join(root, 'data');
    const up = spawn(bin, ['--data-dir', dataDir, 'up', '--port', String(port), '--workers', '1'], {
      cwd: root,
      env: clean,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    up.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    up.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(
        async () => {
          const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          await response?.arrayBuffer();
          return response?.status === 200 && output.includes('Switchyard is up');
        },
        60_000,
        `the installed up to answer /healthz on :${port}`,
        () => up.exitCode !== null,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
      // It runs the installed files, not the clone's.
      const command = readFileSync(`/proc/${up.pid}/cmdline`, 'utf8');
      expect(command).toContain(prefix);
    } finally {
      process.kill(-up.pid!, 'SIGTERM');
      await new Promise((resolve) => (up.exitCode !== null ? resolve(undefined) : up.once('exit', resolve)));
    }
    expect(output).toContain('Switchyard stopped');
  }, 300_000);
});
