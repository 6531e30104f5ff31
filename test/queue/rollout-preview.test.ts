// A rollout's preview (--preview-action) driven by real worker processes over
// a real Redis and the queue fixture plugin (its `preview` action, risk none,
// a dry run of `append`): every selected project previewed once, within the
// concurrency, its summary and output shown (a failed preview too, outside
// the failure budget); the rollout then waits for a second admin even when
// the action is risk none; a risky preview action is refused; a cancel while
// previewing cancels the previews; a claimed preview whose process died gets
// its operation from the sweep; a long output is cut.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PREVIEW_OUTPUT_MAX_CHARS, type RolloutView } from '../../src/core/work/rollouts/index.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { addProjects, inspectAll, untilRollout } from '../support/rollouts.js';
import { ACTOR, PLUGIN_ID, readLines, runCli, startWorker, waitFor } from '../support/workers.js';

const suite = useQueueSuite('rollout-preview');
const ADMIN = 'token:second-admin';

/** Each project's lines in one of its logs (previews.log, operations.log). */
async function linesOf(roots: Map<string, string>, log: string): Promise<Map<string, string[]>> {
  const lines = new Map<string, string[]>();
  for (const [id, root] of roots) lines.set(id, await readLines(join(root, log)).catch(() => [] as string[]));
  return lines;
}

describe('a rollout with a preview', () => {
  it('previews every project once, shows the outputs, waits for a second admin, then runs the action', async () => {
    const installation = await suite.install('preview-run');
    const { runtime, packageDir } = installation;
    // The action itself is harmless: without a preview it would start at once.
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    await writeFile(join(packageDir, 'preview-sleep-ms'), '300\n');
    const roots = await addProjects(installation, 5);
    await writeFile(join(roots.get('p03')!, 'preview-fail'), '');
    await startWorker(installation, { concurrency: 4 });
    await inspectAll(installation);
    await runtime.webhooks.add(
      { url: 'http://127.0.0.1:9/hook', events: ['rollout.awaiting-approval'], secret: 'x'.repeat(32) },
      ACTOR,
    );

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        previewAction: 'preview',
        input: { append: 'upgraded' },
        selection: { all: true },
        concurrency: 2,
        maxFailures: '0',
      },
      ACTOR,
    );
    expect(rollout).toMatchObject({ state: 'previewing', previewAction: 'preview', risk: 'none' });
    const waiting = await untilRollout(
      installation,
      rollout.id,
      'the previews to end',
      (view) => view.state !== 'previewing',
    );
    expect(waiting.state).toBe('awaiting-approval');
    expect(waiting.previewCounts).toMatchObject({ succeeded: 4, failed: 1, pending: 0, running: 0 });
    // A preview failure is shown, not counted against the real run's budget.
    expect(waiting.counts).toMatchObject({ pending: 5, failed: 0 });
    // Previewed once each, nothing changed yet.
    for (const lines of (await linesOf(roots, 'previews.log')).values()) {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^upgraded start=\d+$/);
    }
    for (const lines of (await linesOf(roots, 'operations.log')).values()) expect(lines).toEqual([]);
    await waitFor('the rollout.awaiting-approval delivery', async () =>
      (await runtime.webhooks.deliveries()).some(
        (delivery) => delivery.event === 'rollout.awaiting-approval',
      ),
    );

    const { items } = await runtime.rollouts.projects(rollout.id);
    const p00 = items.find((project) => project.projectId === 'p00')!;
    expect(p00.preview).toMatchObject({
      state: 'succeeded',
      summary: 'would append 1 line to p00',
      output: { diff: '+upgraded', project: 'p00' },
    });
    expect(p00.operationId).toBeUndefined();
    const p03 = items.find((project) => project.projectId === 'p03')!;
    expect(p03.preview).toMatchObject({ state: 'failed', summary: 'cannot append to p03' });
    expect(p03.preview?.errorCode).toBeTruthy();
    // Each preview is an ordinary operation of the preview action, at most `concurrency` at once.
    const previews = await Promise.all(
      items.map((project) => runtime.operations.get(project.preview!.operationId!)),
    );
    expect(previews.every((operation) => operation.action === 'preview')).toBe(true);
    // The most running at one instant (a start counts after an end at the same millisecond).
    const edges = previews
      .flatMap((operation) => [
        { at: Date.parse(operation.startedAt!), step: 1 },
        { at: Date.parse(operation.finishedAt!), step: -1 },
      ])
      .sort((a, b) => a.at - b.at || a.step - b.step);
    let running = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (running += edge.step));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);

    // rollout show prints the preview section, the failure first.
    const shown = await runCli(installation, ['rollout', 'show', rollout.id], { json: false });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/preview\s+preview: ✓4 ✗1/);
    const section = shown.stdout.slice(shown.stdout.indexOf('PREVIEW'));
    expect(section).toMatch(/p03\s+failed/);
    expect(section.indexOf('p03')).toBeLessThan(section.indexOf('p00'));
    expect(section).toMatch(/would append 1 line to p00/);
    const json = JSON.parse(
      (await runCli(installation, ['rollout', 'show', rollout.id])).stdout,
    ) as RolloutView & { projects: { preview?: { output?: unknown } }[] };
    expect(json.projects[0]!.preview?.output).toEqual({ diff: '+upgraded', project: 'p00' });

    await expect(runtime.rollouts.approve(rollout.id, ACTOR)).rejects.toThrow(/another admin must approve/);
    await runtime.rollouts.approve(rollout.id, ADMIN);
    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', (view) =>
      ['succeeded', 'failed', 'paused'].includes(view.state),
    );
    // p03's failed preview does not trip a budget of 0: the real run succeeds everywhere.
    expect(finished.state).toBe('succeeded');
    expect(finished.counts).toMatchObject({ succeeded: 5, failed: 0 });
    for (const lines of (await linesOf(roots, 'operations.log')).values()) expect(lines).toHaveLength(1);
    for (const lines of (await linesOf(roots, 'previews.log')).values()) expect(lines).toHaveLength(1);
  }, 120_000);

  it('refuses a preview action whose risk is not none, naming --preview-action and the risk', async () => {
    const installation = await suite.install('preview-risky');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'preview-risk'), 'high\n');
    await addProjects(installation, 2);
    await startWorker(installation);
    await inspectAll(installation);

    await expect(
      runtime.rollouts.create(
        { pluginId: PLUGIN_ID, action: 'append', previewAction: 'preview', selection: { all: true } },
        ACTOR,
      ),
    ).rejects.toThrow(/--preview-action preview must be an action of risk none.*risk high/);
    const cli = await runCli(
      installation,
      ['rollout', 'create', PLUGIN_ID, 'append', '--all', '--preview-action', 'preview', '--yes'],
      { json: false },
    );
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/--preview-action preview must be an action of risk none.*risk high/);
    const unknown = await runCli(
      installation,
      ['rollout', 'create', PLUGIN_ID, 'append', '--all', '--preview-action', 'nothing', '--yes'],
      { json: false },
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--preview-action nothing .*risk unknown/);
    expect((await runtime.rollouts.list()).items).toEqual([]);
  }, 120_000);

  it('cancelled while previewing: the running preview is cancelled, the others never start', async () => {
    const installation = await suite.install('preview-cancel');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'preview-sleep-ms'), '30000\n');
    const roots = await addProjects(installation, 3);
    await startWorker(installation);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        previewAction: 'preview',
        input: { append: 'x' },
        selection: { all: true },
        concurrency: 1,
      },
      ACTOR,
    );
    await waitFor(
      'the first preview to start',
      async () => (await linesOf(roots, 'previews.log')).get('p00')!.length > 0,
    );
    const cancelled = await runtime.rollouts.cancel(rollout.id, ADMIN);
    expect(cancelled.state).toBe('cancelled');
    const ended = await untilRollout(
      installation,
      rollout.id,
      'its preview to end',
      (view) => view.previewCounts?.running === 0,
    );
    expect(ended.previewCounts).toMatchObject({ cancelled: 3, pending: 0, running: 0, succeeded: 0 });
    expect(ended.counts).toMatchObject({ cancelled: 3, pending: 0 });
    const { items } = await runtime.rollouts.projects(rollout.id);
    const operation = await runtime.operations.get(items[0]!.preview!.operationId!);
    expect(operation.state).toBe('cancelled');
    expect(items.slice(1).every((project) => project.preview?.operationId === undefined)).toBe(true);
    await waitFor(
      'the rollout to leave the sweep',
      async () => !(await runtime.redis.sismember(runtime.keys.rolloutsActive, rollout.id)),
    );
    const previews = [...(await linesOf(roots, 'previews.log')).values()].filter((lines) => lines.length > 0);
    expect(previews).toHaveLength(1);
    for (const lines of (await linesOf(roots, 'operations.log')).values()) expect(lines).toEqual([]);
  }, 120_000);

  it('a claimed preview whose operation was never created (its process died) is given one by the sweep', async () => {
    const installation = await suite.install('preview-lost-claim');
    const { runtime } = installation;
    const roots = await addProjects(installation, 3);
    await startWorker(installation);
    await inspectAll(installation);
    // A creating process that wrote the rollout and took the first preview step, then died before
    // creating the claimed previews' operations: the store's writes and the step script alone.
    const record = await runtime.rollouts.store.create(
      {
        name: 'lost claim',
        pluginId: PLUGIN_ID,
        action: 'append',
        previewAction: 'preview',
        // An output longer than a page carries: its beginning, marked truncated.
        input: { append: 'y', previewPad: PREVIEW_OUTPUT_MAX_CHARS },
        state: 'previewing',
        risk: 'low',
        createdBy: ACTOR,
        total: 3,
        skipped: [],
        waveEnds: [3],
        concurrency: 2,
        maxFailures: 0,
        pauseBetween: false,
        selection: ['--all'],
      },
      ['p00', 'p01', 'p02'],
    );
    const step = await runtime.rollouts.store.previewStep(record.id);
    expect(step.claimed).toEqual(['p00', 'p01']);

    const waiting = await untilRollout(
      installation,
      record.id,
      'the sweep to finish the previews',
      (view) => view.state === 'awaiting-approval',
    );
    expect(waiting.previewCounts).toMatchObject({ succeeded: 3, pending: 0, running: 0 });
    for (const lines of (await linesOf(roots, 'previews.log')).values()) expect(lines).toHaveLength(1);
    const { items } = await runtime.rollouts.projects(record.id);
    expect(new Set(items.map((project) => project.preview?.operationId)).size).toBe(3);
    const preview = items[0]!.preview!;
    expect(preview.outputTruncated).toBe(true);
    expect(typeof preview.output).toBe('string');
    expect((preview.output as string).length).toBe(PREVIEW_OUTPUT_MAX_CHARS + 1);
    expect(preview.output as string).toMatch(/^\{"diff":"\+y","project":"p00","pad":"xxx/);
  }, 120_000);
});
