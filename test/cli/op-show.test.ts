// `op show`: what a person needs to judge an operation and repeat it — its
// input beside its output, who requested and who cancelled it, the worker
// that ran it, how long it took, and the command line that runs it again —
// as real CLI processes against an owned Redis and a real worker.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FIXTURE_INSPECTOR_DIST,
  installPackage,
  makeDataDir,
  makeProject,
  uniquePrefix,
} from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  startWorker,
  stopAll,
  type Installation,
} from './support.js';

const PLUGIN = 'fixture-inspector';

interface ShownOperation {
  id: string;
  state: string;
  input?: unknown;
  requestedBy?: string;
  cancelledBy?: string;
  worker?: string;
  durationMs?: number;
  result?: { output: unknown };
}

let redis: OwnedRedis;
let cleanup: () => Promise<void>;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const made = await makeDataDir();
  cleanup = made.cleanup;
  await installPackage(made.dataDir, FIXTURE_INSPECTOR_DIST, PLUGIN);
  const shop = await makeProject(join(made.dataDir, 'work'), 'shop', ['package.json']);
  installation = { dataDir: made.dataDir, redisUrl: redis.url, prefix: uniquePrefix('op-show') };
  cli = cliOn(installation);
  expect((await cli(['--json', 'project', 'add', shop, '--trust'])).code).toBe(0);
  await reviewAndEnable(installation, PLUGIN, [
    'project.metadata.read',
    'project.files.read',
    'project.operate',
  ]);
}, 120_000);

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  await cleanup?.();
});

/** The words a POSIX shell makes of `line` (bash splits them, so the quoting is checked for real). */
function shellWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('op show', () => {
  it('names who cancelled a queued operation (no worker yet)', async () => {
    const run = await cli(['--json', 'run', PLUGIN, 'shop', 'fixture.echo', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    const { id } = onlyJson<ShownOperation>(run);
    expect((await cli(['--json', 'op', 'cancel', id])).code).toBe(0);

    const shown = onlyJson<ShownOperation>(await cli(['--json', 'op', 'show', id]));
    expect(shown.state).toBe('cancelled');
    expect(shown.requestedBy).toMatch(/^user:/);
    expect(shown.cancelledBy).toBe(shown.requestedBy);
    expect(shown).not.toHaveProperty('worker');

    const text = await cli(['op', 'show', id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^cancelled by\\s+${shown.cancelledBy}$`, 'm'));

    const mine = onlyJson<ShownOperation[]>(
      await cli(['--json', 'op', 'list', '--requested-by', shown.requestedBy!]),
    );
    expect(mine.map((operation) => operation.id)).toEqual([id]);
    expect(
      onlyJson<ShownOperation[]>(await cli(['--json', 'op', 'list', '--requested-by', 'token:nobody'])),
    ).toEqual([]);
  });

  it('shows input and output, requester, worker and duration, and a run-again line that works', async () => {
    await startWorker(installation, 1);
    const input = { note: "it's here", list: [1, 2] };
    const run = await cli(
      ['--json', 'run', PLUGIN, 'shop', 'fixture.echo', '--input', JSON.stringify(input), '--yes', '--wait'],
      45_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const { id } = onlyJson<ShownOperation>(run);

    const shown = onlyJson<ShownOperation>(await cli(['--json', 'op', 'show', id]));
    expect(shown).toMatchObject({ state: 'succeeded', input, result: { output: input } });
    expect(shown.requestedBy).toMatch(/^user:/);
    expect(shown.worker).toMatch(/^worker:/);
    expect(shown.durationMs).toBeGreaterThanOrEqual(0);
    expect(shown).not.toHaveProperty('cancelledBy');

    const text = await cli(['op', 'show', id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^input\s+\{"note":"it's here","list":\[1,2\]\}$/m);
    expect(text.stdout).toMatch(/^output\s+\{"note":"it's here","list":\[1,2\]\}$/m);
    expect(text.stdout).toMatch(new RegExp(`^requested by\\s+${shown.requestedBy}$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^worker\\s+${shown.worker}$`, 'm'));
    expect(text.stdout).toMatch(/^duration\s+\d+m?s$/m);

    const again = /^Run it again:\n {2}(.+)$/m.exec(text.stdout);
    expect(again, text.stdout).not.toBeNull();
    const words = shellWords(again![1]!);
    expect(words.slice(0, 5)).toEqual(['switchyard', 'run', PLUGIN, 'shop', 'fixture.echo']);
    const rerun = await cli(['--json', ...words.slice(1), '--wait'], 45_000);
    expect(rerun.code, rerun.stderr).toBe(0);
    const second = onlyJson<ShownOperation>(rerun);
    expect(second.id).not.toBe(id);
    expect(second).toMatchObject({ state: 'succeeded', input, result: { output: input } });
  }, 120_000);
});
