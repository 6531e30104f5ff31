// A rollout's projects as a file: one JSON line per project (jsonl) or one
// CSV row per project, with its wave, state, operation and error; cells a
// spreadsheet would run as a formula are escaped (csv-stringify).
import { stringify } from 'csv-stringify/sync';
import type { RolloutProjectView } from './rollout-service.js';

export const ROLLOUT_EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type RolloutExportFormat = (typeof ROLLOUT_EXPORT_FORMATS)[number];

const COLUMNS = ['projectId', 'wave', 'state', 'operationId', 'errorCode', 'errorMessage'] as const;

export function rolloutExport(
  rolloutId: string,
  projects: readonly RolloutProjectView[],
  format: RolloutExportFormat,
): string {
  if (format === 'jsonl')
    return projects.map((project) => `${JSON.stringify({ rolloutId, ...project })}\n`).join('');
  const rows = projects.map((project) => [
    rolloutId,
    ...COLUMNS.map((column) => String(project[column] ?? '')),
  ]);
  return stringify([['rolloutId', ...COLUMNS], ...rows], { escape_formulas: true, record_delimiter: 'unix' });
}
