// `batch diff`: what changed between two inspection batches, project by
// project (CLI.md's shape). Facts are matched by id; a fact is "changed" when
// its value or its warning differs. Facts are compared only where both
// batches have a result (a failed inspection says nothing about the project's
// facts); a project that one batch did not cover counts as having no facts
// there, so a newly covered project shows all its facts as added.
import type { Fact } from '@switchyard/plugin-sdk/protocol';
import type { ProjectOutcome } from './batch-store.js';

/** A project's status in one batch; `absent` when the batch did not cover it. */
export type DiffStatus = ProjectOutcome['status'] | 'pending' | 'absent';

export interface FactChange {
  id: string;
  from: string;
  to: string;
  /** Only when the warning differs: old and new warning (null: none). */
  warning?: { from: string | null; to: string | null };
}

export interface ProjectDiff {
  projectId: string;
  added: Fact[];
  removed: Fact[];
  changed: FactChange[];
  status: { from: DiffStatus; to: DiffStatus };
}

export interface BatchDiff {
  from: string;
  to: string;
  projects: ProjectDiff[];
}

/** One side of the diff: the batch id and each covered project's outcome (pending ones too). */
export interface DiffSide {
  batchId: string;
  outcomes: Map<string, ProjectOutcome | 'pending'>;
}

export function diffBatches(from: DiffSide, to: DiffSide): BatchDiff {
  const projectIds = [...new Set([...from.outcomes.keys(), ...to.outcomes.keys()])].sort();
  const projects: ProjectDiff[] = [];
  for (const projectId of projectIds) {
    const diff = diffProject(projectId, from.outcomes.get(projectId), to.outcomes.get(projectId));
    if (diff) projects.push(diff);
  }
  return { from: from.batchId, to: to.batchId, projects };
}

/** True when the diff lists any difference (`--exit-code`). */
export function hasDifferences(diff: BatchDiff): boolean {
  return diff.projects.length > 0;
}

function diffProject(
  projectId: string,
  before: ProjectOutcome | 'pending' | undefined,
  after: ProjectOutcome | 'pending' | undefined,
): ProjectDiff | undefined {
  const status = { from: statusOf(before), to: statusOf(after) };
  const beforeFacts = factsOf(before);
  const afterFacts = factsOf(after);
  const diff: ProjectDiff = { projectId, added: [], removed: [], changed: [], status };
  if (beforeFacts && afterFacts) {
    for (const [id, fact] of afterFacts) {
      const old = beforeFacts.get(id);
      if (!old) diff.added.push(fact);
      else if (old.value !== fact.value || (old.warning ?? null) !== (fact.warning ?? null))
        diff.changed.push(changeOf(old, fact));
    }
    for (const [id, fact] of beforeFacts) if (!afterFacts.has(id)) diff.removed.push(fact);
  }
  const same =
    status.from === status.to &&
    diff.added.length === 0 &&
    diff.removed.length === 0 &&
    diff.changed.length === 0;
  return same ? undefined : diff;
}

function changeOf(old: Fact, fact: Fact): FactChange {
  const change: FactChange = { id: fact.id, from: old.value, to: fact.value };
  if ((old.warning ?? null) !== (fact.warning ?? null))
    change.warning = { from: old.warning ?? null, to: fact.warning ?? null };
  return change;
}

function statusOf(outcome: ProjectOutcome | 'pending' | undefined): DiffStatus {
  if (outcome === undefined) return 'absent';
  return outcome === 'pending' ? 'pending' : outcome.status;
}

/** The facts by id; an absent project has none; undefined when they are unknown (failed, pending). */
function factsOf(outcome: ProjectOutcome | 'pending' | undefined): Map<string, Fact> | undefined {
  if (outcome === undefined) return new Map();
  if (outcome === 'pending' || !outcome.result) return undefined;
  return new Map(outcome.result.facts.map((fact) => [fact.id, fact]));
}
