// Job-level faults: a malformed payload fails at once and finally; SIGTERM
// with a call running past the shutdown deadline leaves no plugin process
// behind; transient failures are retried (before dispatch), final ones are not.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { isAlive, liveGroupMembers } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  livePluginPids,
  readLines,
  sleep,
  startSleepingOperation,
  startWorker,
  untilBatchFinished,
  waitFor,
} from '../support/workers.js';

const suite = useQueueSuite('6-jobs');
const { report } = suite;

function operateCalls(lines: string[], project: string): string[] {
  return lines.filter((line) => line.startsWith(`project.operate ${project} `));
}

describe('job faults', () => {
  it('a malformed job added straight to the inspect (and operate) queue fails at once, finally', async () => {
    const installation = await suite.install('malformed');
    await startWorker(installation);
    const url = new URL(suite.redis.url);
    const options = {
      connection: { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null },
      prefix: `${installation.prefix}:bull`,
    };
    const inspectQueue = new Queue('inspect', options);
    const operateQueue = new Queue('operate', options);
    try {
      const jobOptions = { attempts: 3, backoff: { type: 'fixed', delay: 100 } };
      const jobs = [
        await inspectQueue.add('inspect', { batchId: 42, projectId: ['not', 'a', 'string'] }, jobOptions),
        await operateQueue.add('operate', { operationId: 'op_x', extra: 'field' }, jobOptions),
      ];
      for (const job of jobs) {
        await waitFor(`job ${job.id} to fail`, async () => (await job.getState()) === 'failed', 20_000);
      }
      await sleep(1_000); // a retry (100 ms backoff) would show by now
      const [inspectJob, operateJob] = await Promise.all([
        inspectQueue.getJob(jobs[0]!.id!),
        operateQueue.getJob(jobs[1]!.id!),
      ]);
      const states = await Promise.all([inspectJob!.getState(), operateJob!.getState()]);
      report.add(
        'a job with a bad payload added directly to the inspect queue (attempts 3); same on operate',
        'fails at once, finally: failed state, attemptsMade 1',
        `inspect: ${states[0]}, attemptsMade ${inspectJob!.attemptsMade}, "${inspectJob!.failedReason.slice(0, 90)}…"; ` +
          `operate: ${states[1]}, attemptsMade ${operateJob!.attemptsMade}`,
      );
      expect(states).toEqual(['failed', 'failed']);
      expect(inspectJob!.attemptsMade).toBe(1);
      expect(operateJob!.attemptsMade).toBe(1);
      expect(inspectJob!.failedReason).toMatch(/malformed job payload/);
      expect(operateJob!.failedReason).toMatch(/malformed job payload/);
    } finally {
      await inspectQueue.close();
      await operateQueue.close();
    }
  });

  it('SIGTERM while the plugin sleeps longer than --shutdown-deadline: the worker exits, no plugin process left', async () => {
    const installation = await suite.install('shutdown');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('sleepy');
    const worker = await startWorker(installation, { shutdownDeadlineMs: 1_000 });
    const { operation, pid, grandchild } = await startSleepingOperation(installation, 'sleepy', root);
    const started = performance.now();
    worker.child.kill('SIGTERM');
    const exit = await Promise.race([worker.exited, sleep(15_000).then(() => undefined)]);
    const exitMs = performance.now() - started;
    const leftovers = [
      ...(await liveGroupMembers(pid)),
      ...((await isAlive(grandchild)) ? [grandchild] : []),
      ...(await livePluginPids(packageDir)).map((entry) => entry.pid),
    ];
    const final = await runtime.operations.get(operation.id);
    report.add(
      'SIGTERM a worker (--shutdown-deadline 1000) while its plugin sleeps 30 s (with a grandchild)',
      'the worker exits soon after the deadline; no plugin process (leader, group, grandchild) left behind',
      exit
        ? `exited (code ${exit.code}, signal ${exit.signal}) ${(exitMs / 1000).toFixed(1)} s after SIGTERM; ` +
            `live plugin processes ${leftovers.length}; operation ${final.state}${final.errorCode ? ` (${final.errorCode})` : ''}`
        : `still running 15 s after SIGTERM; live plugin processes ${leftovers.length}`,
    );
    expect(exit).toBeDefined();
    expect(exit!.code).toBe(0);
    expect(exitMs).toBeLessThan(6_000);
    expect([...new Set(leftovers)]).toEqual([]);
    expect(final.state).toBe('failed');
    expect(final.errorCode).toBe('OUTCOME_UNKNOWN');
  });

  it('transient: an inspection whose plugin crashes on the first attempt is retried and succeeds', async () => {
    const installation = await suite.install('retry-inspect');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('flaky');
    await writeFile(join(root, 'inspect-crash-once'), '');
    await startWorker(installation);
    const batch = await runtime.batches.create(PLUGIN_ID, ['flaky'], ACTOR);
    const finished = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 20_000 });
    const attempts = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.inspect flaky '),
    );
    report.add(
      'transient: inspect plugin crashes (exit 3) on the first attempt only',
      'retried with backoff; succeeds; one result',
      `${finished.results!.map((result) => result.status).join(', ')} after ${attempts.length} plugin attempts; ` +
        `results ${finished.results!.length}`,
    );
    expect(finished.succeeded).toBe(1);
    expect(finished.results).toHaveLength(1);
    expect(attempts).toHaveLength(2);
  });

  it('transient before dispatch: an operation whose plugin crashes in initialize is retried and succeeds once', async () => {
    const installation = await suite.install('retry-operate');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('flaky-op');
    await writeFile(join(packageDir, 'crash-initialize-once'), '');
    await startWorker(installation);
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'flaky-op', action: 'append', input: { append: 'ran' } },
      ACTOR,
    );
    const final = await runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(20_000) });
    const crashes = await readLines(join(packageDir, 'crashes.log'));
    const lines = await readLines(join(root, 'operations.log'));
    report.add(
      'transient before dispatch: operate plugin crashes (exit 1) in initialize on the first attempt',
      'retried (never dispatched); succeeds; project file has 1 entry',
      `${final.state} after ${crashes.length} crash(es); file entries ${lines.length}`,
    );
    expect(crashes).toHaveLength(1);
    expect(final.state).toBe('succeeded');
    expect(lines).toHaveLength(1);
  });

  it('after dispatch a crash is not retried: the operation fails CRASHED, the plugin ran once', async () => {
    const installation = await suite.install('crash-dispatched');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('crashy');
    await startWorker(installation);
    const { operation } = await runtime.operations.create(
      {
        pluginId: PLUGIN_ID,
        projectId: 'crashy',
        action: 'append',
        input: { append: 'ran', crashAfterAppend: true },
      },
      ACTOR,
    );
    const final = await runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(20_000) });
    await sleep(1_000); // a retry (500 ms backoff) would show by now
    const calls = operateCalls(await readLines(join(packageDir, 'calls.log')), 'crashy');
    const lines = await readLines(join(root, 'operations.log'));
    const job = await runtime.queues.operate.getJob(operation.id);
    report.add(
      'plugin crashes (exit 4) after project.operate was received (dispatched)',
      'at most once: not retried; failed CRASHED; file has 1 entry',
      `${final.state} (${final.errorCode}); plugin operate calls ${calls.length}; file entries ${lines.length}; ` +
        `job ${job ? `${await job.getState()}, attemptsMade ${job.attemptsMade}` : 'removed'}`,
    );
    expect(final.state).toBe('failed');
    expect(final.errorCode).toBe('CRASHED');
    expect(calls).toHaveLength(1);
    expect(lines).toHaveLength(1);
  });

  it('final: a project untrusted after submission fails the operation and the inspection at once, no retry', async () => {
    const installation = await suite.install('final-untrusted');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('revoked');
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'revoked', action: 'append', input: { append: 'never' } },
      ACTOR,
    );
    const batch = await runtime.batches.create(PLUGIN_ID, ['revoked'], ACTOR);
    await runtime.projects.setTrusted('revoked', false, ACTOR);
    await startWorker(installation);
    const final = await runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(20_000) });
    const finished = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 20_000 });
    await sleep(1_000); // a retry (500 ms backoff) would show by now
    const operateJob = await runtime.queues.operate.getJob(operation.id);
    // The inspection is one project of a batch job: its final failure is recorded and the job completes.
    const inspectJob = await runtime.queues.inspect.getJob(`${batch.batchId}.0`);
    const jobStates = await Promise.all([
      operateJob?.getState(),
      inspectJob?.getState() ?? 'removed (completed)',
    ]);
    const pluginCalls = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.'),
    );
    const lines = await readLines(join(root, 'operations.log'));
    const result = finished.results![0]!;
    report.add(
      'final: project untrusted after submission, before execution (operate and inspect)',
      'failed PROJECT_UNTRUSTED, not retried (operate attemptsMade 1), plugin never called',
      `operation ${final.state} (${final.errorCode}), job ${jobStates[0]} attemptsMade ${operateJob?.attemptsMade}; ` +
        `inspection ${result.status} (${result.error?.code}), job ${jobStates[1]}; ` +
        `plugin project calls ${pluginCalls.length}; file entries ${lines.length}`,
    );
    expect(final).toMatchObject({ state: 'failed', errorCode: 'PROJECT_UNTRUSTED' });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'PROJECT_UNTRUSTED' } });
    expect(jobStates).toEqual(['failed', 'removed (completed)']);
    expect(operateJob!.attemptsMade).toBe(1);
    expect(pluginCalls).toEqual([]);
    expect(lines).toEqual([]);
  });
});
