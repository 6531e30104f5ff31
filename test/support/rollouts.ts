// What the rollout tests share: projects p00.. with their facts, an
// inspection of all of them (so `append` is advertised with its risk), waiting
// for a rollout's state, and each project's runs as the queue fixture
// recorded them (one line per `append` in <project>/operations.log).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RolloutView } from '../../src/core/work/rollouts/index.js';
import { ACTOR, PLUGIN_ID, readLines, untilBatchFinished, waitFor, type Installation } from './workers.js';

/** Projects p00.. under the installation, trusted; each with its facts.json when given. */
export async function addProjects(
  installation: Installation,
  count: number,
  facts: (index: number) => Record<string, string> = () => ({}),
): Promise<Map<string, string>> {
  const roots = new Map<string, string>();
  for (let index = 0; index < count; index++) {
    const id = `p${String(index).padStart(2, '0')}`;
    const root = await installation.addProject(id);
    await writeFile(join(root, 'facts.json'), JSON.stringify(facts(index)));
    roots.set(id, root);
  }
  return roots;
}

export async function inspectAll(installation: Installation): Promise<void> {
  const batch = await installation.runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
  await untilBatchFinished(installation.runtime, batch.batchId, { timeoutMs: 60_000, results: false });
}

/**
 * Polls the rollout until `done`; a read that fails (Redis restarting) is one
 * more poll, not the end of the wait.
 */
export function untilRollout(
  installation: Installation,
  id: string,
  what: string,
  done: (rollout: RolloutView) => boolean,
  timeoutMs = 60_000,
): Promise<RolloutView> {
  return waitFor(
    what,
    async () => {
      const rollout = await installation.runtime.rollouts.get(id).catch(() => undefined);
      return rollout && done(rollout) ? rollout : undefined;
    },
    timeoutMs,
    50,
  );
}

export const isOver = (rollout: RolloutView): boolean =>
  ['succeeded', 'failed', 'cancelled'].includes(rollout.state);

/** Every line each project's plugin appended to its operations.log. */
export async function runsOf(roots: Map<string, string>): Promise<Map<string, string[]>> {
  const runs = new Map<string, string[]>();
  for (const [id, root] of roots)
    runs.set(id, await readLines(join(root, 'operations.log')).catch(() => [] as string[]));
  return runs;
}
