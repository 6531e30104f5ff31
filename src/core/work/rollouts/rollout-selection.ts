// A rollout's selection, fixed at creation: `--all`, labels, `--where`
// filters over the plugin's fleet facts, `--advertised` (the projects whose
// latest successful inspection advertised the action) and project ids; the
// intersection of those given. Untrusted projects and projects whose root is
// gone are set aside as skipped, with the reason. The action's risk is read
// from the same inspections, and so is the preview action's (--preview-action).
import { InvalidInputError, NotFoundError } from '../../platform/index.js';
import { checkLabels, type ProjectService } from '../../projects/index.js';
import type { BatchService } from '../batches/index.js';

export interface RolloutSelection {
  all?: boolean;
  labels?: string[];
  where?: string[];
  advertised?: boolean;
  projects?: string[];
}

export interface SelectedProjects {
  projectIds: string[];
  skipped: { projectId: string; reason: string }[];
  /** `none` only when every selected project's latest inspection advertised the action as `none`. */
  risk: string;
  /** How the selection was given, as a person reads it. */
  described: string[];
  /** The preview action's risk, read as `risk` is (only when a preview action was given). */
  previewRisk?: string;
}

const HARMLESS = 'none';

export async function selectProjects(
  deps: { projects: ProjectService; batches: BatchService },
  pluginId: string,
  action: string,
  selection: RolloutSelection,
  previewAction?: string,
): Promise<SelectedProjects> {
  const described = describe(selection);
  if (described.length === 0)
    throw new InvalidInputError(
      'choose the projects: --all, --label L, --where EXPR, --advertised or project ids (several: their intersection)',
    );
  const listing = await deps.projects.listing();
  let candidates = listing;
  if (selection.projects && selection.projects.length > 0) {
    const known = new Set(listing.map((project) => project.id));
    const unknown = [...new Set(selection.projects)].filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw new NotFoundError(
        `unknown project${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => JSON.stringify(id)).join(', ')} (project list shows the known ones)`,
      );
    const named = new Set(selection.projects);
    candidates = candidates.filter((project) => named.has(project.id));
  }
  if (selection.labels && selection.labels.length > 0) {
    const labels = checkLabels(selection.labels);
    candidates = candidates.filter((project) => labels.every((label) => project.labels.includes(label)));
  }
  if (selection.where && selection.where.length > 0) {
    const rows = await deps.batches.fleet(pluginId, { where: selection.where });
    const matching = new Set(rows.map((row) => row.projectId));
    candidates = candidates.filter((project) => matching.has(project.id));
  }
  // Every candidate's latest inspection in a few round trips (not a few a project).
  const advertised = await deps.batches.actionsOfEach(
    pluginId,
    candidates.map((project) => project.id),
  );
  const risks = new Map<string, string | undefined>();
  const previewRisks = new Map<string, string | undefined>();
  candidates.forEach((project, index) => {
    const actions = advertised[index] ?? [];
    risks.set(project.id, actions.find((offered) => offered.id === action)?.risk);
    if (previewAction !== undefined)
      previewRisks.set(project.id, actions.find((offered) => offered.id === previewAction)?.risk);
  });
  if (selection.advertised) candidates = candidates.filter((project) => risks.get(project.id) !== undefined);

  const skipped: SelectedProjects['skipped'] = [];
  const projectIds: string[] = [];
  for (const project of [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (!project.trusted)
      skipped.push({ projectId: project.id, reason: 'untrusted (project trust allows it)' });
    else if (project.rootMissing)
      skipped.push({ projectId: project.id, reason: `its root ${project.root} is missing` });
    else projectIds.push(project.id);
  }
  return {
    projectIds,
    skipped,
    risk: riskOf(projectIds.map((id) => risks.get(id))),
    described,
    ...(previewAction !== undefined
      ? { previewRisk: riskOf(projectIds.map((id) => previewRisks.get(id))) }
      : {}),
  };
}

function riskOf(risks: (string | undefined)[]): string {
  const harmless = (risk: string | undefined) => risk?.trim().toLowerCase() === HARMLESS;
  if (risks.length > 0 && risks.every(harmless)) return HARMLESS;
  return risks.find((risk) => risk !== undefined && !harmless(risk)) ?? 'unknown';
}

function describe(selection: RolloutSelection): string[] {
  return [
    ...(selection.all ? ['--all'] : []),
    ...(selection.labels ?? []).map((label) => `--label ${label}`),
    ...(selection.where ?? []).map((where) => `--where ${where}`),
    ...(selection.advertised ? ['--advertised'] : []),
    ...(selection.projects ?? []),
  ];
}
