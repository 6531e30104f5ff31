// Operations before batch inspections: while an operation runs on one worker,
// no worker process starts a new inspection call (for at most the hold time),
// so a single operation does not compete for CPU with a batch's spawns.
// Observed from the plugin's own call log, across two worker processes.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  readLines,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
  type WorkerFlags,
} from '../support/workers.js';

const suite = useQueueSuite('4-priority');
const { report } = suite;

const PROJECTS = 80;
const OPERATION_MS = 1_500;
/** Far longer than the operation even when a loaded machine takes long to start its plugin. */
const LONG_HOLD_MS = 10_000;
/** Inspections already spawned when the operation started may still log their call this long after. */
const IN_FLIGHT_MARGIN_MS = 700;

interface Observed {
  operation: { start: number; end: number };
  /** Inspect calls the plugin logged, by epoch ms. */
  inspections: number[];
  batchSucceeded: number;
}

/** A batch on two workers; once it is under way, one operation that takes OPERATION_MS. */
async function operationDuringBatch(
  installation: Installation,
  flags: WorkerFlags,
  operationMs = OPERATION_MS,
): Promise<Observed> {
  const { runtime, packageDir } = installation;
  const ids: string[] = [];
  for (let index = 0; index < PROJECTS; index += 1) {
    const id = `p${String(index).padStart(3, '0')}`;
    await installation.addProject(id);
    ids.push(id);
  }
  const opRoot = await installation.addProject('operated');
  await writeFile(join(packageDir, 'inspect-sleep-ms'), '100\n');
  await Promise.all([startWorker(installation, flags), startWorker(installation, flags)]);
  const calls = join(packageDir, 'calls.log');
  const inspections = async () =>
    (await readLines(calls))
      .filter((line) => line.startsWith('project.inspect '))
      .map((line) => Number(line.split(' ')[4]));

  const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
  await waitFor('the batch to be under way', async () => (await inspections()).length >= 8);
  const { operation } = await runtime.operations.create(
    {
      pluginId: PLUGIN_ID,
      projectId: 'operated',
      action: 'append',
      input: { append: 'op', recordTimes: true, sleepMs: operationMs },
    },
    ACTOR,
  );
  const final = await runtime.operations.wait(operation.id, {
    signal: AbortSignal.timeout(60_000),
    pollMs: 50,
  });
  expect(final.state).toBe('succeeded');
  const view = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 120_000, results: false });
  const [line] = await readLines(join(opRoot, 'operations.log'));
  const match = /^op start=(\d+) end=(\d+)$/.exec(line ?? '');
  expect(match, `operations.log: ${line}`).not.toBeNull();
  return {
    operation: { start: Number(match![1]), end: Number(match![2]) },
    inspections: await inspections(),
    batchSucceeded: view.succeeded,
  };
}

const within = (times: number[], from: number, to: number) =>
  times.filter((time) => time >= from && time <= to).length;

describe('operations take priority over batch inspections', () => {
  it('no worker starts an inspection while an operation runs; the batch resumes after', async () => {
    const observed = await operationDuringBatch(await suite.install('priority-on'), {
      operationPriorityMs: LONG_HOLD_MS,
    });
    const { start, end } = observed.operation;
    const during = within(observed.inspections, start + IN_FLIGHT_MARGIN_MS, end);
    const after = within(observed.inspections, end, Infinity);
    report.add(
      `a ${OPERATION_MS} ms operation submitted while an ${PROJECTS}-project batch runs on 2 workers (--operation-priority ${LONG_HOLD_MS})`,
      'no inspection starts while it runs (after in-flight ones); the batch completes after it',
      `inspections logged during the operation (after ${IN_FLIGHT_MARGIN_MS} ms): ${during}; after it: ${after}; batch ${observed.batchSucceeded}/${PROJECTS} succeeded`,
    );
    expect(during).toBe(0);
    expect(after).toBeGreaterThan(0);
    expect(observed.batchSucceeded).toBe(PROJECTS);
  });

  it('with --operation-priority 0 inspections go on beside the operation', async () => {
    // A longer operation: a wide window, so even a slow machine starts inspections in it.
    const observed = await operationDuringBatch(
      await suite.install('priority-off'),
      { operationPriorityMs: 0 },
      3_000,
    );
    const { start, end } = observed.operation;
    const during = within(observed.inspections, start + IN_FLIGHT_MARGIN_MS, end);
    report.add(
      'the same with --operation-priority 0 (a 3000 ms operation)',
      'inspections go on while the operation runs',
      `inspections logged during the operation (after ${IN_FLIGHT_MARGIN_MS} ms): ${during}`,
    );
    expect(during).toBeGreaterThan(0);
    expect(observed.batchSucceeded).toBe(PROJECTS);
  });

  it('the hold ends after --operation-priority ms even while the operation still runs', async () => {
    const holdMs = 2_500;
    const operationMs = 5_000;
    const observed = await operationDuringBatch(
      await suite.install('priority-expires'),
      { operationPriorityMs: holdMs },
      operationMs,
    );
    const { start, end } = observed.operation;
    // The hold began before the plugin started (by up to a second on a loaded machine).
    const held = within(observed.inspections, start + IN_FLIGHT_MARGIN_MS, start + holdMs - 1_000);
    const resumed = within(observed.inspections, start + holdMs + IN_FLIGHT_MARGIN_MS, end);
    report.add(
      `--operation-priority ${holdMs} with a ${operationMs} ms operation`,
      'inspections pause, then resume before the operation ends',
      `inspections logged while held: ${held}; after the hold, before the operation ended: ${resumed}`,
    );
    expect(held).toBe(0);
    expect(resumed).toBeGreaterThan(0);
    expect(observed.batchSucceeded).toBe(PROJECTS);
  });
});
