// Several scheduler processes, one effective scheduler: health checks happen
// once per interval, not once per scheduler process.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { kill9, readLines, sleep, startScheduler, startWorker } from '../support/workers.js';

const suite = useQueueSuite('5-scheduler');
const { report } = suite;
const EVERY_MS = 1_000;

describe('two scheduler processes', () => {
  it('with --health-every 1000 for ~5.5 s: one health check per interval, not two', async () => {
    const installation = await suite.install('schedulers');
    const { packageDir } = installation;
    await startWorker(installation);
    const first = await startScheduler(installation, EVERY_MS);
    const windowStart = Date.now();
    // The second starts later, so a scheduler that re-adds the job on start would show as an extra run.
    await sleep(2_500);
    const second = await startScheduler(installation, EVERY_MS);
    await sleep(3_000);
    await Promise.all([kill9(first), kill9(second)]);
    const windowEnd = Date.now();
    await sleep(700); // let a job due at the end of the window be processed

    // Each run checks the one enabled plugin once: its health calls are the runs.
    const checks = (await readLines(join(packageDir, 'calls.log')))
      .filter((line) => line.startsWith('plugin.health '))
      .map((line) => Number(line.split(' ')[4]))
      .filter((at) => at >= windowStart && at <= windowEnd)
      .sort((a, b) => a - b);
    const elapsedMs = windowEnd - windowStart;
    const intervals = Math.floor(elapsedMs / EVERY_MS);
    const gaps = checks.slice(1).map((at, index) => at - checks[index]!);
    const minGap = gaps.length ? Math.min(...gaps) : NaN;
    report.add(
      'two scheduler processes with --health-every 1000 (second started 2.5 s after the first), ~5.5 s',
      `once per interval: about ${intervals} health-check runs in ${(elapsedMs / 1000).toFixed(1)} s, not ~${2 * intervals}`,
      `${checks.length} plugin health invocations; smallest gap between runs ${minGap} ms`,
    );
    expect(checks.length).toBeGreaterThanOrEqual(intervals - 1);
    expect(checks.length).toBeLessThanOrEqual(intervals + 1);
    expect(minGap).toBeGreaterThanOrEqual(EVERY_MS / 2);
  });
});
