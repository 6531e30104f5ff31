// `run --wait` says which operation it waits for at once (another terminal
// can follow or cancel it), and with --follow prints the plugin's stderr live
// before the outcome; with --json stdout stays one document and the id goes
// to stderr.
import { describe, expect, it } from 'vitest';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { completion, globalArgs, spawnCliProcess, untilOutput } from '../support/cli-process.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { PLUGIN_ID, startWorker } from '../support/workers.js';

const suite = useQueueSuite('run --wait --follow');
const STARTED = /^operation (op_[0-9a-f-]{36}) queued$/m;

describe('run --wait', () => {
  it('prints the id first, then the stderr live with --follow, then the outcome', async () => {
    const installation = await suite.install('run-follow');
    await installation.addProject('alpha');
    await startWorker(installation, { concurrency: 1 });
    const input = JSON.stringify({ append: 'x', sleepMs: 4_000, stderrEveryMs: 300 });
    const run = spawnCliProcess([
      ...globalArgs(installation),
      'run',
      PLUGIN_ID,
      'alpha',
      'long',
      '--input',
      input,
      '--yes',
      '--wait',
      '--follow',
    ]);
    await untilOutput(run, () => STARTED.test(run.stdout()), 'the operation id on stdout', 10_000);
    await untilOutput(run, () => /tick 2 long/.test(run.stdout()), 'a live stderr line', 15_000);
    expect(run.running(), 'still waiting while the call runs').toBe(true);
    const { code } = await completion(run, { timeoutMs: 30_000 });
    expect(code, run.stderr()).toBe(0);
    const out = run.stdout();
    const id = STARTED.exec(out)![1]!;
    expect(out.indexOf(id)).toBeLessThan(out.indexOf('tick 1 long'));
    expect(out.indexOf('tick 1 long')).toBeLessThan(out.search(/state\s+succeeded/));

    // Without --follow (not a terminal): the id, then only the outcome.
    const quiet = spawnCliProcess([
      ...globalArgs(installation),
      'run',
      PLUGIN_ID,
      'alpha',
      'long',
      '--input',
      JSON.stringify({ append: 'y', sleepMs: 500, stderrEveryMs: 100 }),
      '--yes',
      '--wait',
    ]);
    expect((await completion(quiet, { timeoutMs: 30_000 })).code, quiet.stderr()).toBe(0);
    expect(quiet.stdout()).toMatch(STARTED);
    expect(quiet.stdout()).not.toMatch(/tick \d+ long/);
  }, 90_000);

  it('--json: the id on stderr at once, one JSON document on stdout', async () => {
    const installation = await suite.install('run-follow-json');
    await installation.addProject('alpha');
    await startWorker(installation, { concurrency: 1 });
    const run = spawnCliProcess([
      ...globalArgs(installation),
      '--json',
      'run',
      PLUGIN_ID,
      'alpha',
      'long',
      '--input',
      JSON.stringify({ append: 'z', sleepMs: 2_000, stderrEveryMs: 200 }),
      '--yes',
      '--wait',
      '--follow',
    ]);
    await untilOutput(run, () => STARTED.test(run.stderr()), 'the operation id on stderr', 10_000);
    expect(run.running()).toBe(true);
    expect((await completion(run, { timeoutMs: 30_000 })).code, run.stderr()).toBe(0);
    const document = JSON.parse(run.stdout()) as OperationView;
    expect(document).toMatchObject({ id: STARTED.exec(run.stderr())![1], state: 'succeeded' });
  }, 90_000);
});
