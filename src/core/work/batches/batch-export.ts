// `batch export`: a batch's results as text, produced chunk by chunk so a
// 10,000-project batch is never held as one string. jsonl: one line per
// project. csv: one row per fact (a project without facts — failed, cancelled,
// or none reported — still gets one row, with its status and error), quoted by
// csv-stringify; cells that a spreadsheet would run as a formula (=, +, -, @)
// are escaped, since fact values come from third-party plugins. `redacted` is
// `true` on the rows of a result in which the host replaced a secret.
// `warning` is a fact's own; `warnings` the result's (joined by "; "), on
// every row of the project so a filter on any row keeps them.
import { stringify } from 'csv-stringify/sync';
import type { FleetRow } from './fleet-facts.js';
import type { ProjectOutcome } from './batch-store.js';

export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CSV_COLUMNS = [
  'batchId',
  'projectId',
  'status',
  'factId',
  'label',
  'value',
  'source',
  'warning',
  'warnings',
  'errorCode',
  'errorMessage',
  'redacted',
] as const;

/** One project's line: its outcome, or `pending` while the batch still runs. */
export type ExportRow = Omit<ProjectOutcome, 'status'> & { status: ProjectOutcome['status'] | 'pending' };

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

/** The export's text, one chunk per chunk of outcomes read (the csv header first). */
export async function* exportBatch(
  batchId: string,
  format: ExportFormat,
  chunks: AsyncIterable<ExportRow[]>,
): AsyncGenerator<string> {
  if (format === 'csv') yield csv([[...CSV_COLUMNS]]);
  for await (const outcomes of chunks) {
    if (outcomes.length === 0) continue;
    yield format === 'jsonl'
      ? outcomes.map((outcome) => `${JSON.stringify({ batchId, ...outcome })}\n`).join('')
      : csv(outcomes.flatMap((outcome) => csvRows(batchId, outcome)));
  }
}

function csvRows(batchId: string, outcome: ExportRow): string[][] {
  const error = [outcome.error?.code ?? '', outcome.error?.message ?? ''];
  const redacted = outcome.result?.redacted ? 'true' : '';
  const warnings = (outcome.result?.warnings ?? []).join('; ');
  const facts = outcome.result?.facts ?? [];
  if (facts.length === 0)
    return [[batchId, outcome.projectId, outcome.status, '', '', '', '', '', warnings, ...error, redacted]];
  return facts.map((fact) => [
    batchId,
    outcome.projectId,
    outcome.status,
    fact.id,
    fact.label,
    fact.value,
    fact.source,
    fact.warning ?? '',
    warnings,
    ...error,
    redacted,
  ]);
}

/** `facts --format csv`: one row per project, one column per fact (its value; empty when it has none). */
export function fleetCsv(rows: readonly FleetRow[], factIds: readonly string[]): string {
  return csv([
    ['project', 'batch', 'at', ...factIds],
    ...rows.map((row) => [
      row.projectId,
      row.batchId,
      row.at,
      ...factIds.map((id) => row.facts[id]?.value ?? ''),
    ]),
  ]);
}

function csv(rows: string[][]): string {
  return stringify(rows, { escape_formulas: true, record_delimiter: 'unix' });
}
