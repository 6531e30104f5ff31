// `switchyard demo` (npm start): the commands it suggests work as printed, and
// it says where the web UI's token is.
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { freePort } from '../support/redis.js';
import {
  CLI,
  killMentioning,
  processesMentioning,
  requireBuiltCli,
  runCli,
  spawnCli,
  stopAll,
  stopProcess,
  waitFor,
} from './support.js';

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

// `npm start` stopped by pid, not by a terminal's Ctrl-C to the whole group: npm passes
// SIGTERM and SIGINT to its script's process only (the start script execs the demo, so that is
// the demo, not a `sh -c` that would die alone or sit out a SIGINT), and after a SIGKILL of npm
// the demo sees its parent gone. Everything it started (Redis, api, scheduler, workers) stops
// with it; the port is free again.
describe('npm start, stopped by the pid of npm', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`${signal} to npm leaves no process of the demo and frees the port`, async () => {
      requireBuiltCli();
      const dir = await mkdtemp(join(tmpdir(), 'switchyard-npm-start-'));
      const dataDir = join(dir, 'demo');
      const port = await freePort();
      const npm = spawn(
        'npm',
        ['start', '--ignore-scripts', '--', '--data-dir', dataDir, '--port', String(port), '--workers', '1'],
        {
          cwd: REPO,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, npm_config_update_notifier: 'false' },
        },
      );
      let output = '';
      npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await waitFor(
          () => output.includes('Press Ctrl-C'),
          120_000,
          'the demo under npm start to finish its walk-through',
          () => npm.exitCode !== null,
        );
        const started = processesMentioning(dataDir);
        // The demo, its redis-server, the api, the scheduler and the worker.
        expect(started.length, started.join('\n')).toBeGreaterThanOrEqual(5);
        expect(await answers(port)).toBe(true);
        process.kill(npm.pid!, signal);
        await waitFor(
          async () => processesMentioning(dataDir).length === 0 && !(await answers(port)),
          30_000,
          `every process of the demo to stop after ${signal} to npm`,
        ).catch((error: Error) => {
          throw new Error(
            `${error.message}\nstill running:\n${processesMentioning(dataDir).join('\n')}\n${output}`,
          );
        });
        expect(output).toContain('stopped; nothing left running.');
      } finally {
        killMentioning(dataDir);
        if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    }, 240_000);
  }
});

async function answers(port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
  await response?.arrayBuffer();
  return response !== undefined;
}
