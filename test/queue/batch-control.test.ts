// Batch control on 200-project batches with real workers and plugin processes
// cancel (queued inspections never start, running ones are killed
// with their descendants, projects end cancelled, audited, idempotent), retry
// of the failed ones, diff between two runs with one project changed in
// between (an added, a removed and a changed fact), and export as jsonl/csv.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryAudit } from '../../src/core/access/audit.js';
import type { BatchDiff } from '../../src/core/work/batches/batch-diff.js';
import { completion, globalArgs, spawnCliProcess } from '../support/cli-process.js';
import { isAlive } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  livePluginPids,
  readLines,
  runCli,
  sleep,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
} from '../support/workers.js';

const suite = useQueueSuite('batch-control');
const { report } = suite;
const PROJECTS = 200;

const projectId = (index: number) => `p${String(index).padStart(3, '0')}`;

async function addProjects(installation: Installation, count: number): Promise<Map<string, string>> {
  const roots = new Map<string, string>();
  for (let start = 0; start < count; start += 20) {
    const ids = Array.from({ length: Math.min(20, count - start) }, (_, offset) => projectId(start + offset));
    const added = await Promise.all(ids.map((id) => installation.addProject(id)));
    ids.forEach((id, index) => roots.set(id, added[index]!));
  }
  return roots;
}

async function inspectCalls(installation: Installation): Promise<number> {
  return (await readLines(join(installation.packageDir, 'calls.log'))).filter((line) =>
    line.startsWith('project.inspect '),
  ).length;
}

describe('batch control on 200 projects', () => {
  it('cancel: queued inspections never start, running ones are killed with their descendants; idempotent, audited', async () => {
    const installation = await suite.install('batch-cancel');
    const { runtime, packageDir } = installation;
    const roots = await addProjects(installation, PROJECTS);
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '20000');
    await writeFile(join(roots.get(projectId(0))!, 'inspect-spawn-child'), '');
    await startWorker(installation, { concurrency: 4 });
    const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    const grandchildFile = join(packageDir, `inspect-grandchild-${projectId(0)}.pid`);
    await waitFor('four inspections to run', async () => (await inspectCalls(installation)) >= 4, 30_000);
    const grandchild = await waitFor(
      'the grandchild of the first inspection',
      async () => Number((await readLines(grandchildFile))[0]) || undefined,
      20_000,
    );
    expect((await livePluginPids(packageDir)).length).toBeGreaterThan(0);

    const started = Date.now();
    const cancel = await runCli(installation, ['batch', 'cancel', batch.batchId]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const final = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 15_000 });
    const tookMs = Date.now() - started;
    expect(final.state).toBe('cancelled');
    expect(final.succeeded + final.failed + final.cancelled).toBe(PROJECTS);
    expect(final.cancelled).toBeGreaterThanOrEqual(PROJECTS - 8);
    expect(
      final.results?.filter((r) => r.status === 'cancelled').every((r) => r.error?.code === 'CANCELLED'),
    ).toBe(true);
    await waitFor(
      'the plugin processes to be gone',
      async () => (await livePluginPids(packageDir)).length === 0,
      10_000,
    );
    await waitFor('the grandchild to be gone', async () => !(await isAlive(grandchild)), 10_000);
    const callsAtEnd = await inspectCalls(installation);
    await sleep(3_000); // a queued inspection that still started would show by now
    expect(await inspectCalls(installation)).toBe(callsAtEnd);
    expect(callsAtEnd).toBeLessThanOrEqual(8);

    const again = await runCli(installation, ['batch', 'cancel', batch.batchId]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ batchId: batch.batchId, state: 'cancelled' });
    const audits = (
      await queryAudit(runtime.redis, runtime.keys, {
        action: 'batch.cancel',
        target: batch.batchId,
      })
    ).items.reverse();
    expect(audits.map((entry) => entry.detail.outcome)).toEqual(['cancelled', 'already-over']);
    expect(audits[0]!.actor).not.toBe('');
    report.add(
      `batch cancel of a ${PROJECTS}-project batch with 4 inspections running (20 s each, one with a grandchild)`,
      'ends cancelled at once; running calls killed with descendants; queued ones never start; repeat harmless; audited',
      `state ${final.state} after ${tookMs} ms: ${final.succeeded} succeeded, ${final.failed} failed, ${final.cancelled} cancelled; ` +
        `${callsAtEnd} inspect calls in all; plugin processes and grandchild gone; audit outcomes ${audits.map((a) => a.detail.outcome).join(', ')}`,
    );
  }, 120_000);

  it('retry --failed, diff with an added, a removed and a changed fact, export jsonl and csv', async () => {
    const installation = await suite.install('batch-diff');
    const roots = await addProjects(installation, PROJECTS);
    const changed = projectId(7);
    const failing = [projectId(3), projectId(50), projectId(199)];
    await writeFile(join(roots.get(changed)!, 'facts.json'), JSON.stringify({ node: '20', lock: 'yes' }));
    for (const id of failing) await writeFile(join(roots.get(id)!, 'inspect-error'), '');
    await startWorker(installation, { concurrency: 6 });

    const first = await runCli(installation, ['inspect', PLUGIN_ID, '--all']);
    expect(first.code).toBe(1);
    const a = JSON.parse(first.stdout);
    expect(a).toMatchObject({ total: PROJECTS, succeeded: PROJECTS - 3, failed: 3, state: 'failed' });

    // Retry --failed while they still fail: the same three, still failing.
    const retried = await runCli(installation, ['batch', 'retry', a.batchId, '--failed']);
    expect(retried.code).toBe(1);
    const r1 = JSON.parse(retried.stdout);
    expect(r1).toMatchObject({ total: 3, failed: 3, retryOf: a.batchId });
    expect(r1.results.map((o: { projectId: string }) => o.projectId)).toEqual(failing);

    // Fixed, and one project changed: a new full batch.
    for (const id of failing) await rm(join(roots.get(id)!, 'inspect-error'));
    await writeFile(join(roots.get(changed)!, 'facts.json'), JSON.stringify({ node: '22', license: 'MIT' }));
    const second = await runCli(installation, ['batch', 'retry', a.batchId]);
    expect(second.code, second.stderr).toBe(0);
    const b = JSON.parse(second.stdout);
    expect(b).toMatchObject({ total: PROJECTS, succeeded: PROJECTS, state: 'succeeded' });

    const diffRun = await runCli(installation, ['batch', 'diff', a.batchId, b.batchId, '--exit-code']);
    expect(diffRun.code).toBe(1);
    const diff = JSON.parse(diffRun.stdout) as BatchDiff;
    expect(diff.from).toBe(a.batchId);
    expect(diff.to).toBe(b.batchId);
    expect(diff.projects.map((p) => p.projectId)).toEqual([
      projectId(3),
      changed,
      projectId(50),
      projectId(199),
    ]);
    expect(diff.projects.find((p) => p.projectId === changed)).toEqual({
      projectId: changed,
      added: [{ id: 'license', label: 'license', value: 'MIT', source: 'facts.json' }],
      removed: [{ id: 'lock', label: 'lock', value: 'yes', source: 'facts.json' }],
      changed: [{ id: 'node', from: '20', to: '22' }],
      status: { from: 'succeeded', to: 'succeeded' },
    });
    for (const id of failing)
      expect(diff.projects.find((p) => p.projectId === id)?.status).toEqual({
        from: 'failed',
        to: 'succeeded',
      });
    const same = await runCli(installation, ['batch', 'diff', b.batchId, b.batchId, '--exit-code']);
    expect(same.code).toBe(0);
    expect(JSON.parse(same.stdout).projects).toEqual([]);

    const jsonl = await runCli(installation, ['batch', 'export', b.batchId, '--format', 'jsonl']);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const lines = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(PROJECTS);
    expect(lines.find((line) => line.projectId === changed)).toMatchObject({
      batchId: b.batchId,
      projectId: changed,
      status: 'succeeded',
    });
    const csv = await runCli(installation, ['batch', 'export', b.batchId, '--format', 'csv']);
    expect(csv.code).toBe(0);
    const rows = csv.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe(
      'batchId,projectId,status,factId,label,value,source,warning,warnings,errorCode,errorMessage,redacted',
    );
    expect(rows).toHaveLength(1 + PROJECTS + 2); // one row per fact: p007 has three
    expect(rows).toContain(`${b.batchId},${changed},succeeded,license,license,MIT,facts.json,,,,,`);
    report.add(
      `two ${PROJECTS}-project batches, 3 projects failing in the first, one project's facts changed in between`,
      'retry --failed covers exactly the failed; diff finds the added, removed and changed fact and the status changes; export streams',
      `diff projects ${diff.projects.map((p) => p.projectId).join(', ')}; ${changed}: +license -lock ~node 20→22; ` +
        `jsonl ${lines.length} lines, csv ${rows.length - 1} rows`,
    );
  }, 240_000);

  it('Ctrl-C on inspect leaves the batch running and says how to follow or cancel it (exit 130); show --watch follows it to its end', async () => {
    const installation = await suite.install('batch-sigint');
    const { runtime, packageDir } = installation;
    await addProjects(installation, 20);
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '2000');
    await startWorker(installation, { concurrency: 2 });
    const inspect = spawnCliProcess([...globalArgs(installation), 'inspect', PLUGIN_ID, '--all']);
    await waitFor('two inspections to run', async () => (await inspectCalls(installation)) >= 2, 30_000);
    inspect.child.kill('SIGINT');
    const { code } = await completion(inspect);
    const stderr = inspect.stderr();
    expect(code, inspect.output()).toBe(130);
    const batchId = /batch (batch_[0-9a-f-]+) keeps running/.exec(stderr)?.[1];
    expect(batchId, stderr).toBeDefined();
    expect(stderr).toContain(`switchyard batch show ${batchId} --watch`);
    expect(stderr).toContain(`switchyard batch cancel ${batchId}`);
    expect((await runtime.batches.get(batchId!)).state).toBe('running');

    const watch = spawnCliProcess([
      ...globalArgs(installation),
      '--json',
      'batch',
      'show',
      batchId!,
      '--watch',
    ]);
    await sleep(1_500);
    expect(watch.running()).toBe(true);
    const cancel = await runCli(installation, ['batch', 'cancel', batchId!]);
    expect(cancel.code).toBe(0);
    const watched = await completion(watch);
    // Exit 1 as inspect would: the batch did not succeed (it was cancelled).
    expect(watched.code, watch.output()).toBe(1);
    expect(JSON.parse(watch.stdout())).toMatchObject({ batchId, state: 'cancelled', total: 20, pending: 0 });
    report.add(
      'Ctrl-C on `inspect` while its 20-project batch runs; then `batch show --watch`, then `batch cancel`',
      'exit 130, the batch keeps running, stderr names `batch show <id> --watch` and `batch cancel <id>`; the watch ends with the batch',
      `exit ${code}; stderr: ${JSON.stringify(stderr.trim().split('\n')[0])}; watch ended ${JSON.parse(watch.stdout()).state}`,
    );
  }, 120_000);
});
