// The fleet owner's two-run session with real workers and a real plugin: a
// fleet of projects on several Go versions is inspected, ten projects move to
// another version, the fleet is inspected again. `facts --where` and `--counts`
// answer from the latest successful results, `batch diff` lists exactly the
// ten, and a failed inspection leaves a project's last good facts in place.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, runCli, startWorker, untilBatchFinished } from '../support/workers.js';

const suite = useQueueSuite('fleet facts');

const FLEET = 1_000;
const VERSIONS = ['1.19', '1.20.4', '1.21', '1.9'];
const versionOf = (index: number) => VERSIONS[index % VERSIONS.length]!;
const name = (index: number) => `svc-${String(index).padStart(4, '0')}`;

type Row = { projectId: string; facts: Record<string, { value: string }> };

describe('fleet facts', () => {
  it(`${FLEET} projects inspected twice, ten changed between: facts, counts and the diff agree`, async () => {
    const installation = await suite.install('fleet');
    const { runtime, projectsDir } = installation;
    for (let index = 0; index < FLEET; index++) {
      const root = join(projectsDir, name(index));
      await mkdir(root);
      await writeFile(join(root, 'facts.json'), JSON.stringify({ 'go.version': versionOf(index) }));
    }
    const scan = await runtime.projects.scan(projectsDir, { trust: true, labels: ['go'] }, ACTOR);
    expect(scan.registered).toHaveLength(FLEET);
    await startWorker(installation, { concurrency: 4 });

    const inspectAll = async () => {
      const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
      return untilBatchFinished(runtime, batch.batchId, {
        timeoutMs: 240_000,
        intervalMs: 250,
        results: false,
      });
    };
    const first = await inspectAll();
    expect(first).toMatchObject({ state: 'succeeded', succeeded: FLEET });

    // Ten projects move from 1.19 to 1.22; one other project's next inspection fails.
    const moved = Array.from({ length: 10 }, (_, n) => name(n * VERSIONS.length)); // every 4th: on 1.19
    for (const project of moved)
      await writeFile(join(projectsDir, project, 'facts.json'), JSON.stringify({ 'go.version': '1.22' }));
    const failing = name(1);
    await writeFile(join(projectsDir, failing, 'inspect-error'), '');
    const second = await inspectAll();
    expect(second).toMatchObject({ state: 'failed', succeeded: FLEET - 1, failed: 1 });
    await rm(join(projectsDir, failing, 'inspect-error'));

    // Below 1.20, version-aware: 1.19 and 1.9 (1.9 < 1.20 although "1.9" > "1.20" as text).
    const old = await runCli(installation, [
      'facts',
      PLUGIN_ID,
      '--fact',
      'go.version',
      '--where',
      'go.version<1.20',
    ]);
    expect(old.code, old.stderr).toBe(0);
    const oldRows = JSON.parse(old.stdout) as Row[];
    const expectedOld = Array.from({ length: FLEET }, (_, index) => index)
      .filter((index) => ['1.19', '1.9'].includes(versionOf(index)) && !moved.includes(name(index)))
      .map(name);
    expect(oldRows.map((row) => row.projectId)).toEqual(expectedOld);
    expect(new Set(oldRows.map((row) => row.facts['go.version']!.value))).toEqual(new Set(['1.19', '1.9']));

    const counts = await runCli(installation, ['facts', PLUGIN_ID, '--fact', 'go.version', '--counts']);
    expect(counts.code, counts.stderr).toBe(0);
    const quarter = FLEET / VERSIONS.length;
    expect(JSON.parse(counts.stdout)).toEqual({
      fact: 'go.version',
      total: FLEET,
      counts: expect.arrayContaining([
        { value: '1.19', count: quarter - 10 },
        { value: '1.20.4', count: quarter },
        { value: '1.21', count: quarter },
        { value: '1.9', count: quarter },
        { value: '1.22', count: 10 },
      ]),
    });
    // The project whose second inspection failed keeps the facts of its last good one.
    const kept = await runCli(installation, ['facts', PLUGIN_ID, '--where', `project.id=${failing}`]);
    expect((JSON.parse(kept.stdout) as Row[])[0]?.facts['go.version']?.value).toBe(versionOf(1));

    const diff = await runCli(installation, ['batch', 'diff', first.batchId, second.batchId]);
    const changed = (JSON.parse(diff.stdout) as { projects: { projectId: string; changed: unknown[] }[] })
      .projects;
    expect(
      changed.filter((project) => project.changed.length > 0).map((project) => project.projectId),
    ).toEqual([...moved].sort());
    // The same comparison as a fleet owner asks it: the plugin's latest batch against the one before.
    const latest = await runCli(installation, ['batch', 'diff', PLUGIN_ID, 'latest']);
    expect(latest.code, latest.stderr).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual(JSON.parse(diff.stdout));

    // Each project's history: both batches' results, newest first, with a failure's error.
    const history = await runCli(installation, ['project', 'history', moved[0]!, '--plugin', PLUGIN_ID]);
    expect(history.code, history.stderr).toBe(0);
    type Entry = {
      batchId: string;
      status: string;
      facts: Record<string, { value: string }>;
      error?: { code: string };
    };
    const entries = JSON.parse(history.stdout) as Entry[];
    expect(entries.map((entry) => [entry.batchId, entry.status, entry.facts['go.version']?.value])).toEqual([
      [second.batchId, 'succeeded', '1.22'],
      [first.batchId, 'succeeded', '1.19'],
    ]);
    const failedHistory = JSON.parse(
      (await runCli(installation, ['project', 'history', failing, '--plugin', PLUGIN_ID])).stdout,
    ) as Entry[];
    expect(failedHistory.map((entry) => entry.status)).toEqual(['failed', 'succeeded']);
    expect(failedHistory[0]!.error?.code).toBeTruthy();
    expect(failedHistory[1]!.facts['go.version']?.value).toBe(versionOf(1));
    const lastOnly = await runCli(installation, [
      'project',
      'history',
      failing,
      '--plugin',
      PLUGIN_ID,
      '--limit',
      '1',
    ]);
    expect((JSON.parse(lastOnly.stdout) as Entry[]).map((entry) => entry.batchId)).toEqual([second.batchId]);
    const table = await runCli(installation, ['project', 'history', moved[0]!, '--plugin', PLUGIN_ID], {
      json: false,
    });
    expect(table.stdout).toContain('go.version=1.22');
    const nobody = await runCli(installation, [
      'project',
      'history',
      'no-such-project',
      '--plugin',
      PLUGIN_ID,
    ]);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/unknown project "no-such-project"/);

    // The trend over both batches: counts, the one new failure, and go.version's distribution.
    const trend = await runtime.batches.trend(PLUGIN_ID, 5, 'go.version');
    expect(trend.map((point) => [point.batchId, point.succeeded, point.failed, point.newFailures])).toEqual([
      [first.batchId, FLEET, 0, 0],
      [second.batchId, FLEET - 1, 1, 1],
    ]);
    expect(trend[1]!.distribution).toContainEqual({ value: '1.22', count: 10 });
    expect(trend[0]!.distribution).not.toContainEqual(expect.objectContaining({ value: '1.22' }));
    expect(
      (await runtime.batches.trend(PLUGIN_ID, 1)).map((point) => [point.batchId, point.newFailures]),
    ).toEqual([[second.batchId, 1]]);

    // Regex and label filters, the table and CSV for people.
    const regex = await runCli(installation, [
      'facts',
      PLUGIN_ID,
      '--where',
      'go.version~^1\\.2[02]',
      '--label',
      'go',
    ]);
    expect((JSON.parse(regex.stdout) as Row[]).length).toBe(quarter + 10);
    const none = await runCli(installation, ['facts', PLUGIN_ID, '--label', 'rust']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const csv = await runCli(installation, ['facts', PLUGIN_ID, '--fact', 'go.version', '--format', 'csv'], {
      json: false,
    });
    expect(csv.stdout.split('\n')[0]).toBe('project,batch,at,go.version');
    expect(csv.stdout.trim().split('\n')).toHaveLength(FLEET + 1);

    const bad = await runCli(installation, ['facts', PLUGIN_ID, '--where', 'go.version~(']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--where "go\.version~\(": error parsing regexp: missing closing \)/);
    const unknown = await runCli(installation, ['facts', 'no-such-plugin']);
    expect(unknown.code).toBe(2);
    suite.report.add(
      `fleet of ${FLEET}, inspected twice, ${moved.length} changed between`,
      'facts --where/--counts from the latest successful results; batch diff lists exactly the changed',
      `${oldRows.length} below 1.20, 1.22 on ${moved.length}, diff of ${moved.length}, a failed inspection kept its facts`,
    );
  }, 600_000);
});
