// PROTOCOL §8: an application error (-32000) from the plugin is the plugin's
// own answer, not a fault: the call is tried once (inspection and operation)
// and the plugin's health is left as it was.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  readLines,
  sleep,
  startWorker,
  untilBatchFinished,
  waitFor,
} from '../support/workers.js';

const suite = useQueueSuite('9-plugin-error');
const { report } = suite;

describe('application error (-32000)', () => {
  it('an inspection answered with -32000 is attempted once, recorded PLUGIN_ERROR, health unchanged', async () => {
    const installation = await suite.install('app-error-inspect');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('refusing');
    await writeFile(join(root, 'inspect-app-error'), '');
    await startWorker(installation);
    const before = (await runtime.plugins.show(PLUGIN_ID)).health;

    const batch = await runtime.batches.create(PLUGIN_ID, ['refusing'], ACTOR);
    const finished = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 20_000 });
    await sleep(1_500); // a retry (500 ms backoff) would have shown by now
    const attempts = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.inspect refusing '),
    );
    const after = await runtime.plugins.show(PLUGIN_ID);
    report.add(
      'an inspection the plugin answers with -32000 (application error)',
      'tried once; failed PLUGIN_ERROR with the message redacted; health left as it was',
      `${attempts.length} call(s); ${finished.results![0]!.status} ${finished.results![0]!.error?.code}; health ${before} → ${after.health}`,
    );
    expect(attempts).toHaveLength(1);
    expect(finished.results).toMatchObject([
      { projectId: 'refusing', status: 'failed', error: { code: 'PLUGIN_ERROR' } },
    ]);
    expect(finished.results![0]!.error!.message).toContain('the project is not ready');
    expect(finished.results![0]!.error!.message).not.toContain('app-err-s3cr3t');
    expect(after.health).toBe(before);
    expect(after.lastError).toBeUndefined();
  });

  it('an operation answered with -32000 is attempted once, fails PLUGIN_ERROR, health unchanged', async () => {
    const installation = await suite.install('app-error-operate');
    const { runtime, packageDir } = installation;
    await installation.addProject('refused');
    await startWorker(installation);
    const before = (await runtime.plugins.show(PLUGIN_ID)).health;

    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'refused', action: 'append', input: { appError: true } },
      ACTOR,
    );
    const done = await waitFor('the operation to end', async () => {
      const view = await runtime.operations.get(operation.id);
      return view.state === 'queued' || view.state === 'running' ? undefined : view;
    });
    await sleep(1_500); // a retry (500 ms backoff) would have shown by now
    const calls = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.operate refused '),
    );
    const after = await runtime.plugins.show(PLUGIN_ID);
    report.add(
      'an operation the plugin answers with -32000 (application error)',
      'tried once; failed PLUGIN_ERROR; health left as it was',
      `${calls.length} call(s); ${done.state} ${done.errorCode}; health ${before} → ${after.health}`,
    );
    expect(calls).toHaveLength(1);
    expect(done).toMatchObject({ state: 'failed', errorCode: 'PLUGIN_ERROR' });
    expect(after.health).toBe(before);
  });
});
