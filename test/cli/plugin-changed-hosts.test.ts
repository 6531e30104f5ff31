// A plugin found `changed` on several hosts stays `changed` until every one of
// them has seen the trusted bytes again (docs/PROTOCOL.md §5): one host back
// on the reviewed bytes does not clear what another still holds. Each "host"
// is the CLI run in a UTS namespace of its own with its own host name (root
// only), on one package directory whose bytes the test changes and restores.
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, globalArgs } from '../support/cli-process.js';
import { uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { PLUGIN_ID as QUEUE, installQueuePlugin } from '../support/workers.js';
import { cliOn, requireBuiltCli, reviewAndEnable, type Installation } from './support.js';

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('changed-hosts test skipped: a host name of its own (unshare --uts) needs root');

interface Shown {
  trust: string;
  enabled: boolean;
}

let redis: OwnedRedis;
let root: string;
let installation: Installation;
let manifestPath: string;

/** The CLI as run on host `host`: exit code and stdout. */
function onHost(host: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = [process.execPath, CLI, ...globalArgs(installation), '--json', ...args];
  return new Promise((resolve) => {
    execFile(
      'unshare',
      ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', host, ...command],
      { timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function trustOf(): Promise<string> {
  const shown = await onHost('host-a', ['plugin', 'show', QUEUE]);
  expect(shown.code, shown.stderr).toBe(0);
  return (JSON.parse(shown.stdout) as Shown).trust;
}

beforeAll(async () => {
  if (!isRoot) return;
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-changed-hosts-'));
  const dataDir = join(root, 'data');
  const packageDir = await installQueuePlugin(dataDir);
  manifestPath = join(packageDir, 'plugin.json');
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-changed-hosts') };
  await reviewAndEnable(installation, QUEUE, []);
  // The fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
  const cli = cliOn(installation);
  const policy = await cli(['plugin', 'set', QUEUE, '--allow-write', packageDir, '--allow-read', '/proc']);
  expect(policy.code, policy.stderr).toBe(0);
  const enabled = await cli(['plugin', 'enable', QUEUE, '--scope', 'project.metadata.read', '--yes']);
  expect(enabled.code, enabled.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe.skipIf(!isRoot)("'changed' seen on two hosts", () => {
  it('stays changed until both have seen the trusted bytes again', async () => {
    const trustedBytes = await readFile(manifestPath);
    await appendFile(manifestPath, ' ');
    // host-b's call finds other bytes: the plugin is disabled and marked changed.
    const call = await onHost('host-b', ['plugin', 'health', QUEUE]);
    expect(call.code).not.toBe(0);
    expect(call.stdout + call.stderr).toContain('FINGERPRINT_CHANGED');
    expect(await trustOf()).toBe('changed');
    // host-c's refresh finds other bytes too.
    expect((await onHost('host-c', ['plugin', 'refresh'])).code).toBe(0);
    expect(await trustOf()).toBe('changed');

    await writeFile(manifestPath, trustedBytes);
    // host-c sees the trusted bytes again; host-b has not looked since it saw other ones.
    expect((await onHost('host-c', ['plugin', 'refresh'])).code).toBe(0);
    expect(await trustOf(), 'after host-c alone saw the trusted bytes').toBe('changed');
    // host-b sees them too: trusted again (still disabled until enabled again).
    expect((await onHost('host-b', ['plugin', 'refresh'])).code).toBe(0);
    expect(await trustOf(), 'after both hosts saw the trusted bytes').toBe('trusted');
  }, 60_000);
});
