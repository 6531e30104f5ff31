// Health checks run every interval, but the audit keeps decisions, not
// heartbeats: no entry per run, one `plugin.health` entry each time a
// plugin's health changes (unknown → healthy, healthy → unhealthy and back),
// however many checks saw the same state.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { PLUGIN_ID, readLines, sleep, startScheduler, startWorker, waitFor } from '../support/workers.js';

const suite = useQueueSuite('health audit');
const EVERY_MS = 400;

describe('health checks in the audit', () => {
  it('one entry per change of state, none per run', async () => {
    const installation = await suite.install('health-audit');
    const { runtime, packageDir } = installation;
    await startWorker(installation);
    await startScheduler(installation, EVERY_MS);
    const healthCalls = async () =>
      (await readLines(join(packageDir, 'calls.log')).catch(() => [])).filter((line) =>
        line.startsWith('plugin.health '),
      ).length;
    const changes = async () =>
      (await readAudit(runtime.redis, runtime.keys, 1_000))
        .filter((entry) => entry.action === 'plugin.health')
        .reverse()
        .map((entry) => `${String(entry.detail.from)}→${String(entry.detail.to)}`);

    // Enabling checks it once (the review's exchange); then the scheduler's runs.
    const before = await healthCalls();
    await waitFor('five scheduled health checks', async () => (await healthCalls()) >= before + 5, 30_000);
    await writeFile(join(packageDir, 'unhealthy'), '');
    await waitFor('the plugin to be seen unhealthy', async () =>
      (await changes()).includes('healthy→unhealthy') ? true : undefined,
    );
    const sick = await healthCalls();
    await waitFor('four more checks while unhealthy', async () => (await healthCalls()) >= sick + 4, 30_000);
    await rm(join(packageDir, 'unhealthy'));
    await waitFor('the plugin to be seen healthy again', async () =>
      (await changes()).includes('unhealthy→healthy') ? true : undefined,
    );
    await sleep(EVERY_MS * 3);

    const audit = await readAudit(runtime.redis, runtime.keys, 1_000);
    expect(audit.filter((entry) => entry.action.startsWith('scheduler.'))).toEqual([]);
    const seen = await changes();
    // unknown→healthy comes first unless the enable's own check already stored healthy.
    expect(seen.filter((change) => change !== 'unknown→healthy')).toEqual([
      'healthy→unhealthy',
      'unhealthy→healthy',
    ]);
    const entry = audit.find((item) => item.action === 'plugin.health' && item.detail.to === 'unhealthy')!;
    expect(entry).toMatchObject({ target: PLUGIN_ID, actor: expect.stringMatching(/^worker:/) });
    expect(await healthCalls()).toBeGreaterThan(before + 10);
  }, 120_000);
});
