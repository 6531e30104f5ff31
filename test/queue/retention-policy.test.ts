// Retention as per-plugin policy, with real workers and the real plugin: a
// plugin's finished batches stay while they are among its newest N or younger
// than D days (`plugin set --retention-batches/--retention-days`); what a run
// deleted is audited by plugin; the fleet view, each project's history of
// what is kept and the diff of the newest two survive it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/index.js';
import { runRetention } from '../../src/core/work/upkeep/retention.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, runCli, startWorker, untilBatchFinished } from '../support/workers.js';

const suite = useQueueSuite('retention policy');
const PROJECTS = ['alpha', 'beta', 'gamma'];
/** The host's default age (SWITCHYARD_RETENTION_DAYS) as 0: only the policy keeps anything. */
const HOST = { recordsSeconds: 0, failedJobsSeconds: 1 };

describe('retention policy', () => {
  it('keeps the newest N or those younger than D days per plugin, audits what it dropped, keeps the fleet view', async () => {
    const installation = await suite.install('retention');
    const { runtime, projectsDir } = installation;
    for (const project of PROJECTS) await installation.addProject(project);
    await startWorker(installation, { concurrency: 2 });
    const batchIds: string[] = [];
    for (let run = 1; run <= 4; run++) {
      for (const project of PROJECTS)
        await writeFile(join(projectsDir, project, 'facts.json'), JSON.stringify({ run: String(run) }));
      const batch = await runtime.batches.create(PLUGIN_ID, PROJECTS, ACTOR);
      await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 60_000, results: false });
      batchIds.push(batch.batchId);
    }
    const kept = async () =>
      (await Promise.all(batchIds.map((id) => runtime.batches.store.get(id, { results: false })))).map(
        (batch) => batch !== undefined,
      );

    // Younger than 30 days: all kept, although the host's age (0 here) would drop all but two.
    const days = await runCli(installation, ['plugin', 'set', PLUGIN_ID, '--retention-days', '30']);
    expect(days.code, days.stderr).toBe(0);
    expect(JSON.parse(days.stdout).retention).toEqual({ batches: 2, days: 30 });
    expect(await runRetention(runtime, HOST)).toEqual({ batches: 0, operations: 0, byPlugin: {} });
    expect(await kept()).toEqual([true, true, true, true]);

    // The newest three, whatever their age: the oldest goes, and the audit says so.
    const count = await runCli(installation, [
      'plugin',
      'set',
      PLUGIN_ID,
      '--retention-days',
      '0',
      '--retention-batches',
      '3',
    ]);
    expect(count.code, count.stderr).toBe(0);
    expect(await runRetention(runtime, HOST)).toMatchObject({ batches: 1, byPlugin: { [PLUGIN_ID]: 1 } });
    expect(await kept()).toEqual([false, true, true, true]);
    const audit = await readAudit(runtime.redis, runtime.keys, 20);
    expect(audit.find((entry) => entry.action === 'retention.deleted')?.detail).toMatchObject({
      batches: 1,
      byPlugin: { [PLUGIN_ID]: 1 },
    });

    // What the fleet view, the history and the diff need is still there.
    const facts = await runCli(installation, ['facts', PLUGIN_ID, '--fact', 'run', '--counts']);
    expect(JSON.parse(facts.stdout)).toMatchObject({ total: 3, counts: [{ value: '4', count: 3 }] });
    const history = await runCli(installation, ['project', 'history', 'beta', '--plugin', PLUGIN_ID]);
    expect(
      (JSON.parse(history.stdout) as { batchId: string; facts: { run: { value: string } } }[]).map(
        (entry) => [entry.batchId, entry.facts.run.value],
      ),
    ).toEqual([
      [batchIds[3], '4'],
      [batchIds[2], '3'],
      [batchIds[1], '2'],
    ]);
    const diff = await runCli(installation, ['batch', 'diff', batchIds[2]!, batchIds[3]!]);
    expect(diff.code, diff.stderr).toBe(0);

    // Fewer than two would leave `batch diff` nothing to compare with: refused, naming the option.
    const tooFew = await runCli(installation, ['plugin', 'set', PLUGIN_ID, '--retention-batches', '1']);
    expect(tooFew.code).toBe(2);
    expect(tooFew.stderr).toMatch(/--retention-batches must be an integer from 2/);
    const show = await runCli(installation, ['plugin', 'show', PLUGIN_ID], { json: false });
    expect(show.stdout).toMatch(/retention: the newest 3 finished batches, and those younger than 0 days/);
    suite.report.add(
      'retention as per-plugin policy',
      'newest N or younger than D days kept; drops audited by plugin; facts, history and diff survive',
      `4 batches: 30 days kept all, 3 batches dropped 1 (audited); facts of 3 projects and 3 history entries remain`,
    );
  }, 180_000);
});
