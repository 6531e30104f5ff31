// `switchyard completion bash|zsh|fish`: the bash script loads and completes
// commands, subcommands, options and (through `__complete`) plugin and project
// ids; zsh and fish get scripts built from the same command tree.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { keysFor } from '../../src/core/redis/keys.js';
import { BatchStore } from '../../src/core/work/batches/batch-store.js';
import { OperationStore } from '../../src/core/work/operations/operation-store.js';
import { FIXTURE_INSPECTOR_DIST, installPackage, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { CLI, requireBuiltCli, runCli } from './support.js';

let redis: OwnedRedis | undefined;
let root = '';
let env: NodeJS.ProcessEnv = {};

function bash(script: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', script], { env, timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

/** What bash offers after the words typed (the last one is the word being completed). */
async function complete(...words: string[]): Promise<string[]> {
  const list = words.map((word) => `'${word}'`).join(' ');
  const out = await bash(
    `source <(switchyard completion bash)
     COMP_WORDS=(switchyard ${list}); COMP_CWORD=${words.length}; COMPREPLY=()
     _switchyard; printf '%s\\n' "\${COMPREPLY[@]}"`,
  );
  return out.split('\n').filter(Boolean);
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-completion-'));
  const dataDir = join(root, 'data');
  await mkdir(join(dataDir, 'plugins'), { recursive: true });
  await installPackage(dataDir, FIXTURE_INSPECTOR_DIST, 'fixture-inspector');
  await mkdir(join(root, 'projects', 'shop'), { recursive: true });
  // `switchyard` on PATH, configured through the environment as a user would.
  await mkdir(join(root, 'bin'));
  await writeFile(join(root, 'bin', 'switchyard'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(join(root, 'bin', 'switchyard'), 0o755);
  env = {
    PATH: `${join(root, 'bin')}:${process.env.PATH}`,
    HOME: root,
    XDG_CONFIG_HOME: join(root, 'config'),
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_REDIS_URL: redis.url,
    SWITCHYARD_PREFIX: uniquePrefix('completion'),
  };
  const globals = ['--data-dir', dataDir, '--redis-url', redis.url, '--prefix', env.SWITCHYARD_PREFIX!];
  expect((await runCli([...globals, 'plugin', 'refresh'])).code).toBe(0);
  expect((await runCli([...globals, 'project', 'add', join(root, 'projects', 'shop')])).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('completion', () => {
  it('the bash script loads: complete -p switchyard', async () => {
    expect(await bash('source <(switchyard completion bash) && complete -p switchyard')).toMatch(
      /complete .*-F _switchyard switchyard/,
    );
  });

  it('completes commands, subcommands and options (global ones too), skipping option values', async () => {
    expect(await complete('pl')).toEqual(['plugin']);
    expect(await complete('plugin', '')).toEqual(
      expect.arrayContaining(['list', 'show', 'trust', 'enable', 'disable', 'refresh']),
    );
    expect(await complete('--data-dir', '/somewhere', 'plugin', 'trust', '--f')).toEqual(['--fingerprint']);
    expect(await complete('token', 'create', '--exp')).toEqual(['--expires-in']);
    expect(await complete('--pro')).toEqual(expect.arrayContaining(['--profile']));
    expect(await complete('log')).toEqual(expect.arrayContaining(['login', 'logout']));
  });

  it('completes plugin and project ids from the installation', async () => {
    expect(await complete('plugin', 'show', '')).toEqual(['fixture-inspector']);
    expect(await complete('inspect', 'fix')).toEqual(['fixture-inspector']);
    expect(await complete('inspect', 'fixture-inspector', '')).toEqual(['shop']);
    expect(await complete('project', 'trust', 's')).toEqual(['shop']);
  }, 60_000);

  it('completes batch and operation ids: latest and the newest by their first 8 hex digits', async () => {
    const client = new Redis(redis!.url);
    try {
      const keys = keysFor(env.SWITCHYARD_PREFIX!);
      const batch = await new BatchStore(client, keys).create('fixture-inspector', ['shop'], 'user:test');
      const { operation } = await new OperationStore(client, keys).create({
        pluginId: 'fixture-inspector',
        projectId: 'shop',
        action: 'x',
        input: null,
        requestedBy: 'user:test',
      });
      const short = (id: string) => id.replace(/^[a-z]+_/, '').slice(0, 8);
      expect(await complete('batch', 'show', '')).toEqual(['latest', short(batch.batchId)]);
      expect(await complete('batch', 'diff', 'fixture-inspector', 'la')).toEqual(['latest']);
      expect(await complete('op', 'logs', short(operation.id).slice(0, 3))).toEqual([short(operation.id)]);
    } finally {
      client.disconnect();
    }
  }, 60_000);

  it('zsh and fish scripts come from the same tree; an unknown shell exits 2', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^#compdef switchyard\n.*bashcompinit/);
    const fish = await runCli(['completion', 'fish']);
    expect(fish.stdout).toMatch(/complete -c switchyard -n __fish_use_subcommand -a plugin/);
    expect(fish.stdout).toMatch(/__complete plugins/);
    const bad = await runCli(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bash, zsh and fish/);
  });
});
