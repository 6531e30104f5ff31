// One page of a batch's per-project results, for a batch page that stays
// usable at 10,000 projects: failures first (failed, cancelled, pending, then
// succeeded), by project id within each status, optionally one status only.
// Offset paging: a person steps through numbered pages and the order is
// fixed once the batch ends; while it runs a row may move between pages.
// A result may be a MiB: the page is ordered by the projects' statuses alone,
// and only its own rows' stored outcomes are read, a few at a time, spliced
// into the answer as they are (never parsed), and no more than
// RESULTS_PAGE_MAX_BYTES of them: a page that reaches it ends early.
import type { ProjectOutcome } from './batch-store.js';

/** A project's status in a batch, in the order the page lists them. */
export const RESULT_STATUSES = ['failed', 'cancelled', 'pending', 'succeeded'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

/** A project without an outcome yet appears as `pending`, without result or error. */
export type ResultRow = ProjectOutcome | { projectId: string; status: 'pending' };

export interface ResultsQuery {
  status?: ResultStatus;
  offset?: number;
  limit?: number;
}

export interface ResultsPage {
  items: ResultRow[];
  /** How many rows match the status filter (all rows without one). */
  total: number;
  offset: number;
  limit: number;
}

/** The page size unless asked otherwise. */
export const RESULTS_PAGE_SIZE = 100;

const RANK = new Map<ResultStatus, number>(RESULT_STATUSES.map((status, index) => [status, index]));

/** The page of `rows` the query asks for (rows in any order). */
export function pageOfResults(rows: readonly ResultRow[], query: ResultsQuery = {}): ResultsPage {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? RESULTS_PAGE_SIZE;
  const kept = query.status === undefined ? [...rows] : rows.filter((row) => row.status === query.status);
  kept.sort(
    (a, b) =>
      RANK.get(a.status)! - RANK.get(b.status)! ||
      (a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : 0),
  );
  return { items: kept.slice(offset, offset + limit), total: kept.length, offset, limit };
}

/** Past this many bytes of results a page ends (with at least one row); the next starts at offset + items.length. */
export const RESULTS_PAGE_MAX_BYTES = 4 * 1024 * 1024;

/** Stored outcomes read per round trip while a page is sent: a few MiB at most. */
const READ_GROUP = 4;

/**
 * The page as JSON text in pieces (the ResultsPage document, with `batch`):
 * `head` and `rows` (the page's rows as pageOfResults ordered them, without
 * their outcomes) and `read`, which gives the rows' stored outcomes as JSON
 * text (null: none yet, sent as pending).
 */
export async function* resultsPageText(
  head: { batch: object; total: number; offset: number; limit: number },
  rows: readonly ResultRow[],
  read: (projectIds: string[]) => Promise<(string | null)[]>,
  maxBytes = RESULTS_PAGE_MAX_BYTES,
): AsyncGenerator<string> {
  yield `{"batch":${JSON.stringify(head.batch)},"total":${head.total},"offset":${head.offset},"limit":${head.limit},"items":[`;
  let bytes = 0;
  let first = true;
  for (let start = 0; start < rows.length && bytes < maxBytes; start += READ_GROUP) {
    const group = rows.slice(start, start + READ_GROUP);
    const recorded = group.filter((row) => row.status !== 'pending').map((row) => row.projectId);
    const texts = new Map<string, string | null>();
    if (recorded.length > 0) {
      const found = await read(recorded);
      recorded.forEach((id, index) => texts.set(id, found[index] ?? null));
    }
    for (const row of group) {
      if (bytes >= maxBytes) break;
      const text =
        texts.get(row.projectId) ?? JSON.stringify({ projectId: row.projectId, status: 'pending' });
      yield first ? text : `,${text}`;
      first = false;
      bytes += text.length;
    }
  }
  yield ']}';
}
