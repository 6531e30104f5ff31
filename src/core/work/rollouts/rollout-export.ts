// A rollout's projects as a file: one JSON line per project (jsonl) or one
// CSV row per project, with its wave, state, operation and error; cells a
// spreadsheet would run as a formula are escaped (csv-stringify). Written a
// page at a time as the pages are read: memory holds one page, whatever the
// rollout's size.
import { stringify } from 'csv-stringify/sync';
import type { RolloutProjectView } from './rollout-service.js';

export const ROLLOUT_EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type RolloutExportFormat = (typeof ROLLOUT_EXPORT_FORMATS)[number];

const COLUMNS = ['projectId', 'wave', 'state', 'operationId', 'errorCode', 'errorMessage'] as const;

export async function* rolloutExportChunks(
  rolloutId: string,
  pages: AsyncIterable<readonly RolloutProjectView[]>,
  format: RolloutExportFormat,
): AsyncGenerator<string> {
  const csv = (rows: string[][]) => stringify(rows, { escape_formulas: true, record_delimiter: 'unix' });
  if (format === 'csv') yield csv([['rolloutId', ...COLUMNS]]);
  for await (const projects of pages) {
    if (projects.length === 0) continue;
    if (format === 'jsonl')
      yield projects.map((project) => `${JSON.stringify({ rolloutId, ...project })}\n`).join('');
    else
      yield csv(
        projects.map((project) => [rolloutId, ...COLUMNS.map((column) => String(project[column] ?? ''))]),
      );
  }
}
