// Long operations (CLI.md `plugin set`, `run --timeout`, `op logs`;
// ARCHITECTURE.md "Operation lifecycle": long operations): the time limit is
// host policy per plugin, the worker keeps its job lock and the project lock
// alive for the whole call (workers run with a 5 s lock so renewal is really
// exercised), stderr is readable while the call runs, cancel kills it, and a
// worker killed during it still ends it OUTCOME_UNKNOWN. The long call lasts
// LONG_OP_MS (40 s; SWITCHYARD_LONG_OP_MS=180000 runs a full 3-minute call).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/plugins/plugin-store.js';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { completion, globalArgs, spawnCliProcess, untilOutput } from '../support/cli-process.js';
import { isAlive } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  PLUGIN_ID,
  kill9,
  pidOfIdentity,
  readLines,
  runCli,
  startWorker,
  waitFor,
  writtenPid,
  type Installation,
  type Spawned,
} from '../support/workers.js';

const LONG_OP_MS = Number(process.env.SWITCHYARD_LONG_OP_MS ?? 40_000);
const LOCK_MS = 5_000;

const suite = useQueueSuite('9-long-operations');
const { report } = suite;

async function setLimits(installation: Installation, ...args: string[]) {
  const set = await runCli(installation, ['plugin', 'set', PLUGIN_ID, ...args]);
  expect(set.code, set.stderr).toBe(0);
  return JSON.parse(set.stdout) as { timeLimits: Record<string, number> };
}

async function run(installation: Installation, project: string, input: object, ...extra: string[]) {
  return runCli(installation, [
    'run',
    PLUGIN_ID,
    project,
    'long',
    '--input',
    JSON.stringify(input),
    '--yes',
    ...extra,
  ]);
}

async function opLogs(installation: Installation, id: string): Promise<LogEntry[]> {
  const shown = await runCli(installation, ['op', 'logs', id]);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as LogEntry[];
}

const ticks = (entries: LogEntry[]) => entries.filter((entry) => /^tick \d+ long$/.test(entry.line));

function untilState(installation: Installation, id: string, timeoutMs: number): Promise<OperationView> {
  return installation.runtime.operations.wait(id, { signal: AbortSignal.timeout(timeoutMs), pollMs: 100 });
}

describe('long operations', () => {
  it(
    `a ${LONG_OP_MS / 1000} s operation succeeds with a raised limit on a worker with a ${LOCK_MS / 1000} s lock; its stderr is readable live`,
    async () => {
      const installation = await suite.install('long-ok');
      const { runtime, packageDir } = installation;
      await installation.addProject('alpha');
      const shown = await runCli(installation, ['plugin', 'show', PLUGIN_ID]);
      expect(JSON.parse(shown.stdout).timeLimits).toEqual({
        inspectMs: 15_000,
        operateMs: 900_000,
        healthMs: 10_000,
      });
      expect(JSON.parse(shown.stdout).containment.mechanism).toMatch(/^(subreaper|process-group)$/);
      const limits = await setLimits(
        installation,
        '--operate-timeout',
        `${Math.ceil(LONG_OP_MS / 60_000) + 1}m`,
      );
      expect(limits.timeLimits.operateMs).toBeGreaterThan(LONG_OP_MS);
      await startWorker(installation, { concurrency: 1, lockDurationMs: LOCK_MS, callTimeoutMs: 3_600_000 });

      const started = performance.now();
      const queued = await run(installation, 'alpha', {
        append: 'long',
        sleepMs: LONG_OP_MS,
        stderrEveryMs: 1_000,
      });
      expect(queued.code, queued.stderr).toBe(0);
      const { id } = JSON.parse(queued.stdout) as OperationView;
      const follow = spawnCliProcess([...globalArgs(installation), 'op', 'logs', id, '--follow']);
      const pluginFollow = spawnCliProcess([
        ...globalArgs(installation),
        'plugin',
        'logs',
        PLUGIN_ID,
        '--follow',
      ]);

      const early = await waitFor(
        '3 stderr lines in op logs',
        async () => {
          const entries = await opLogs(installation, id);
          return ticks(entries).length >= 3 ? entries : undefined;
        },
        30_000,
        500,
      );
      const runningThen = await runtime.operations.get(id);
      await untilOutput(follow, () => follow.stdout().includes('tick 3 long'), 'op logs --follow', 10_000);
      await untilOutput(
        pluginFollow,
        () => pluginFollow.stdout().includes('tick 3 long'),
        'plugin logs --follow',
        10_000,
      );
      expect(follow.running()).toBe(true);

      const final = await untilState(installation, id, LONG_OP_MS + 60_000);
      const elapsedMs = performance.now() - started;
      const followed = await completion(follow, { timeoutMs: 10_000, closed: true });
      pluginFollow.child.kill('SIGINT');
      const pluginFollowed = await completion(pluginFollow, { timeoutMs: 10_000 });
      const operateCalls = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
        line.startsWith('project.operate '),
      );
      const lastTicks = ticks(await opLogs(installation, id));
      report.add(
        `a ${LONG_OP_MS / 1000} s operation, operate limit raised with plugin set, worker lock ${LOCK_MS / 1000} s`,
        'succeeded, one plugin call (never taken away), stderr readable while running; op logs --follow ends with it',
        `${final.state} after ${(elapsedMs / 1000).toFixed(1)} s; ${operateCalls.length} project.operate call(s); ` +
          `${ticks(early).length} tick lines readable while ${runningThen.state}; --follow exit ${followed.code}, ` +
          `${lastTicks.length} tick lines in the end`,
      );
      expect(runningThen.state).toBe('running');
      expect(final.state).toBe('succeeded');
      expect(operateCalls).toHaveLength(1);
      expect(followed.code).toBe(0);
      expect(follow.stdout()).toContain(`tick ${Math.floor(LONG_OP_MS / 1_000) - 2} long`);
      expect(pluginFollowed.code).toBe(0);
      expect(lastTicks.length).toBeGreaterThanOrEqual(Math.floor(LONG_OP_MS / 1_000) - 2);
    },
    LONG_OP_MS + 120_000,
  );

  it('a longer --timeout is refused naming the limit; the plugin limit and a shorter --timeout end it TIMEOUT', async () => {
    const installation = await suite.install('long-timeout');
    await installation.addProject('beta');
    await installation.addProject('gamma');
    await setLimits(installation, '--operate-timeout', '6s');
    await startWorker(installation, { concurrency: 2, lockDurationMs: LOCK_MS, callTimeoutMs: 3_600_000 });

    const refused = await run(installation, 'beta', { sleepMs: 30_000 }, '--timeout', '1h');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/operate limit of 6s/);

    const input = { sleepMs: 30_000, stderrEveryMs: 500, writePid: true };
    const started = performance.now();
    const [byPlugin, byRequest] = await Promise.all([
      run(installation, 'beta', input, '--wait'),
      run(installation, 'gamma', input, '--timeout', '3s', '--wait'),
    ]);
    const wallMs = performance.now() - started;
    const [plugin, request] = [byPlugin, byRequest].map(
      (result) => JSON.parse(result.stdout) as OperationView,
    );
    const logs = await opLogs(installation, request!.id);
    report.add(
      'plugin set --operate-timeout 6s; one run without --timeout, one with --timeout 3s; one with --timeout 1h',
      '1h refused (exit 2, names the 6s limit); the others fail TIMEOUT at 6 s and 3 s; stderr and the reason kept',
      `exit ${refused.code}; ${plugin!.state} ${plugin!.errorCode} "${plugin!.errorMessage}", ` +
        `${request!.state} ${request!.errorCode} "${request!.errorMessage}"; both within ${(wallMs / 1000).toFixed(1)} s; ` +
        `${ticks(logs).length} stderr lines and "${logs.at(-1)?.line}" in op logs`,
    );
    expect(byPlugin.code).toBe(1);
    expect(byRequest.code).toBe(1);
    expect(plugin).toMatchObject({ state: 'failed', errorCode: 'TIMEOUT' });
    expect(plugin!.errorMessage).toMatch(/6000 ms/);
    expect(request).toMatchObject({ state: 'failed', errorCode: 'TIMEOUT', timeoutMs: 3_000 });
    expect(request!.errorMessage).toMatch(/3000 ms/);
    expect(wallMs).toBeLessThan(20_000);
    expect(ticks(logs).length).toBeGreaterThanOrEqual(3);
    expect(logs.at(-1)).toMatchObject({ source: 'host', line: expect.stringMatching(/TIMEOUT|no response/) });
  }, 120_000);

  it('cancel during a long run kills the plugin and its child; the stderr of the cancelled operation is kept', async () => {
    const installation = await suite.install('long-cancel');
    const root = await installation.addProject('delta');
    await setLimits(installation, '--operate-timeout', '10m');
    await startWorker(installation, { concurrency: 1, lockDurationMs: LOCK_MS, callTimeoutMs: 3_600_000 });
    const queued = await run(installation, 'delta', {
      sleepMs: 120_000,
      stderrEveryMs: 500,
      writePid: true,
      spawnChild: true,
    });
    const { id } = JSON.parse(queued.stdout) as OperationView;
    const pid = await writtenPid(root);
    // Written after plugin.pid: a loaded runner may read between the two.
    const grandchild = await writtenPid(root, 'grandchild.pid');
    // Past the lock duration (and past the old fixed 15 s limit's share of it): the call still runs.
    await waitFor(
      '8 stderr lines',
      async () => ticks(await opLogs(installation, id)).length >= 8,
      30_000,
      500,
    );
    const cancelled = await runCli(installation, ['op', 'cancel', id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const final = await untilState(installation, id, 15_000);
    const gone = await waitFor(
      'the plugin and its child to be gone',
      async () => !(await isAlive(pid)) && !(await isAlive(grandchild)),
      5_000,
    );
    const logs = await opLogs(installation, id);
    report.add(
      'op cancel while a long operation runs (after its lock was renewed several times)',
      'cancelled; plugin and its child gone; its stderr kept in op logs',
      `${final.state}; processes gone: ${gone}; ${ticks(logs).length} stderr lines kept, last "${logs.at(-1)?.line}"`,
    );
    expect(final.state).toBe('cancelled');
    expect(ticks(logs).length).toBeGreaterThanOrEqual(8);
  }, 90_000);

  it('a worker killed with SIGKILL during a long operation: the plugin dies with it and the operation ends OUTCOME_UNKNOWN', async () => {
    const installation = await suite.install('long-kill');
    const root = await installation.addProject('epsilon');
    await setLimits(installation, '--operate-timeout', '10m');
    const workers = await Promise.all([
      startWorker(installation, { concurrency: 1, lockDurationMs: LOCK_MS, callTimeoutMs: 3_600_000 }),
      startWorker(installation, { concurrency: 1, lockDurationMs: LOCK_MS, callTimeoutMs: 3_600_000 }),
    ]);
    const queued = await run(installation, 'epsilon', {
      append: 'once',
      sleepMs: 120_000,
      stderrEveryMs: 1_000,
      writePid: true,
    });
    const { id } = JSON.parse(queued.stdout) as OperationView;
    const pid = await writtenPid(root);
    // Past the old fixed 15 s limit: only a raised limit keeps the call alive this long.
    await waitFor(
      '17 stderr lines',
      async () => ticks(await opLogs(installation, id)).length >= 17,
      40_000,
      500,
    );
    const record = (await installation.runtime.operations.store.get(id))!;
    expect(record).toMatchObject({ state: 'running', dispatched: true });
    const victim = workers.find((worker: Spawned) => worker.pid === pidOfIdentity(record.worker))!;
    const killedAt = performance.now();
    await kill9(victim);
    const final = await untilState(installation, id, 30_000);
    const endedMs = performance.now() - killedAt;
    const pluginGone = !(await isAlive(pid));
    const appended = await readLines(join(root, 'operations.log'));
    report.add(
      'SIGKILL the worker 17 s into a long operation (operate limit 10m, lock 5 s), a second worker running',
      'plugin gone with the worker; failed OUTCOME_UNKNOWN; the action ran once',
      `plugin gone: ${pluginGone}; ${final.state} ${final.errorCode} ${(endedMs / 1000).toFixed(1)} s after the kill; ` +
        `operations.log has ${appended.length} line(s)`,
    );
    expect(pluginGone).toBe(true);
    expect(final).toMatchObject({ state: 'failed', errorCode: 'OUTCOME_UNKNOWN' });
    expect(appended).toHaveLength(1);
  }, 120_000);
});
