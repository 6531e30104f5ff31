// The webhook events a batch's end produces: `batch.finished` (its summary),
// and, compared with the previous batch of the same plugin (batch-diff.ts),
// each of this batch's projects with its own previous result (outcomesAsOf),
// `batch.new-failures` (projects that failed now and did not before) and
// `facts.changed` (projects whose facts were added, removed or changed).
// The notify room produces each once, whichever process saw the end first.
import type { Notices } from '../notify/index.js';
import { diffBatches, type DiffSide } from './batch-diff.js';
import { withoutResults, type BatchStore } from './batch-store.js';

/** A notice lists at most this many projects (and says how many there were). */
export const NOTICE_MAX_PROJECTS = 1_000;

export async function announceBatchEnd(store: BatchStore, notices: Notices, batchId: string): Promise<void> {
  const batch = await store.get(batchId, { results: false });
  if (!batch || batch.state === 'running') return;
  const { pluginId } = batch;
  const summary = withoutResults(batch);
  const options = { key: batchId, pluginId };
  await notices.publish('batch.finished', { batch: summary }, options);
  const [failures, facts] = await Promise.all([
    notices.wants('batch.new-failures', pluginId),
    notices.wants('facts.changed', pluginId),
  ]);
  if (!failures && !facts) return;
  const previous = await store.previous(batch);
  if (!previous) return;
  const outcomes: DiffSide['outcomes'] = new Map();
  for await (const chunk of store.outcomeChunks(batchId))
    for (const [projectId, outcome] of chunk) outcomes.set(projectId, outcome);
  const to: DiffSide = { batchId, outcomes };
  // Each project against its own previous result: a batch over part of the fleet is no outage.
  const from: DiffSide = {
    batchId: previous.batchId,
    outcomes: await store.outcomesAsOf(previous, [...outcomes.keys()]),
  };
  const diff = diffBatches(from, to);
  const common = { batch: summary, previousBatchId: previous.batchId };
  const listed = <T>(projects: T[]) => ({
    count: projects.length,
    projects: projects.slice(0, NOTICE_MAX_PROJECTS),
    ...(projects.length > NOTICE_MAX_PROJECTS ? { truncated: true } : {}),
  });
  if (failures) {
    const failed = diff.projects
      .filter((project) => project.status.to === 'failed' && project.status.from !== 'failed')
      .map((project) => {
        const outcome = to.outcomes.get(project.projectId);
        const error = outcome && outcome !== 'pending' ? outcome.error : undefined;
        return { projectId: project.projectId, previously: project.status.from, ...(error ? { error } : {}) };
      });
    if (failed.length > 0)
      await notices.publish('batch.new-failures', { ...common, ...listed(failed) }, options);
  }
  if (facts) {
    const changed = diff.projects
      .filter((project) => project.added.length + project.removed.length + project.changed.length > 0)
      .map(({ projectId, added, removed, changed }) => ({ projectId, added, removed, changed }));
    if (changed.length > 0)
      await notices.publish('facts.changed', { ...common, ...listed(changed) }, options);
  }
}
