// A worker cut off from Redis (ARCHITECTURE.md "No overlap after a worker
// dies", PROTOCOL §9.5): once it cannot renew its locks, another worker may
// take the job over, end the operation OUTCOME_UNKNOWN and release the
// project. Before either lock could lapse, the worker must have killed the
// plugin call, so nothing of it can still act on the project. Redis is
// SIGSTOPped: connections stay open and every command hangs, as in a partition.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { projectLockName } from '../../src/core/projects/project-lock.js';
import { isAlive } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { PLUGIN_ID, readLines, runCli, startWorker, waitFor, writtenPid } from '../support/workers.js';

const LOCK_MS = 3_000;

const suite = useQueueSuite('9-lock-lapse');
const { report } = suite;

describe('a worker that cannot renew its locks', () => {
  it('kills its running plugin call before the job lock or the project lock could lapse', async () => {
    const installation = await suite.install('lock-lapse');
    const { runtime, prefix } = installation;
    const root = await installation.addProject('zeta');
    const worker = await startWorker(installation, {
      concurrency: 1,
      lockDurationMs: LOCK_MS,
      callTimeoutMs: 600_000,
    });
    const queued = await runCli(installation, [
      'run',
      PLUGIN_ID,
      'zeta',
      'long',
      '--input',
      JSON.stringify({ append: 'once', sleepMs: 60_000, writePid: true }),
      '--yes',
    ]);
    expect(queued.code, queued.stderr).toBe(0);
    const { id } = JSON.parse(queued.stdout) as OperationView;
    const pid = await writtenPid(root);
    await waitFor(
      'the operation to be dispatched',
      async () => (await runtime.operations.store.get(id))?.dispatched,
    );
    // Let a renewal or two happen, then read how long each lock still holds and cut Redis off.
    await new Promise((resolve) => setTimeout(resolve, LOCK_MS));
    const [jobTtl, projectTtl] = await Promise.all([
      runtime.redis.pttl(`${prefix}:bull:operate:${id}:lock`),
      runtime.redis.pttl(`${prefix}:project-lock:${await projectLockName(root)}`),
    ]);
    expect(jobTtl).toBeGreaterThan(0);
    expect(projectTtl).toBeGreaterThan(0);
    const stoppedAt = Date.now();
    const lapseAt = stoppedAt + Math.min(jobTtl, projectTtl);
    suite.redis.pause();
    let killedAt: number;
    try {
      await waitFor('the plugin to be killed', async () => !(await isAlive(pid)), 3 * LOCK_MS, 20);
      killedAt = Date.now();
    } finally {
      suite.redis.resume();
    }
    const final = await runtime.operations.wait(id, { signal: AbortSignal.timeout(30_000), pollMs: 100 });
    const appended = await readLines(join(root, 'operations.log'));
    report.add(
      `Redis SIGSTOPped while a long operation runs (worker lock ${LOCK_MS / 1000} s)`,
      'the plugin is gone before the first lock could lapse; the operation ends failed OUTCOME_UNKNOWN; the worker lives',
      `plugin killed ${killedAt - stoppedAt} ms after the stop, ${lapseAt - killedAt} ms before the first lock could lapse ` +
        `(job lock ${jobTtl} ms, project lock ${projectTtl} ms left); ${final.state} ${final.errorCode}; ` +
        `worker running: ${worker.running()}`,
    );
    expect(killedAt).toBeLessThan(lapseAt);
    expect(final).toMatchObject({ state: 'failed', errorCode: 'OUTCOME_UNKNOWN' });
    expect(appended).toHaveLength(1);
    expect(worker.running()).toBe(true);
  }, 60_000);
});
