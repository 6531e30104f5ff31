// One page of a batch's per-project results, for a batch page that stays
// usable at 10,000 projects: failures first (failed, cancelled, pending, then
// succeeded), by project id within each status, optionally one status only.
// Offset paging: a person steps through numbered pages and the order is
// fixed once the batch ends; while it runs a row may move between pages.
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
