// `switchyard demo` (npm start): the commands it suggests work as printed, and
// it says where the web UI's token is.
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import { CLI, requireBuiltCli, runCli, spawnCli, stopAll, stopProcess, waitFor } from './support.js';

let root: string | undefined;

afterAll(async () => {
  await stopAll();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('switchyard demo', () => {
  it('grants what its suggested run needs and prints where the api token is', async () => {
    requireBuiltCli();
    root = await mkdtemp(join(tmpdir(), 'switchyard-cli-demo-'));
    const dataDir = join(root, 'demo');
    const demo = spawnCli([
      '--data-dir',
      dataDir,
      'demo',
      '--port',
      String(await freePort()),
      '--workers',
      '1',
    ]);
    try {
      await waitFor(
        () => demo.output.stdout.includes('Press Ctrl-C'),
        120_000,
        'the demo to finish its walk-through',
        () => demo.exitCode !== null,
      );
      const stdout = demo.output.stdout;
      expect(stdout).toContain(join(dataDir, 'api-token'));
      const input = '{"hello":"world"}';
      const suggested = [
        'run',
        'fixture-inspector',
        'shop-frontend',
        'fixture.echo',
        '--input',
        input,
        '--yes',
        '--wait',
      ];
      // Never `npx switchyard` (outside the clone it fetches an unrelated package): this CLI by its path.
      expect(stdout).not.toContain('npx switchyard');
      expect(stdout).toContain(
        `node ${realpathSync(CLI)} --data-dir ${dataDir} ${suggested.join(' ').replace(input, `'${input}'`)}`,
      );
      const ran = await runCli(['--data-dir', dataDir, ...suggested], 60_000);
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      expect(ran.stdout).toMatch(/state\s+succeeded/);
    } finally {
      await stopProcess(demo, 20_000);
    }
  }, 240_000);
});
