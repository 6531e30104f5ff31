// One page of a plugin's fleet as every front reads it (GET /plugins/:id/facts,
// `facts`): by project id when unsorted (the cursor is the last project id),
// or sorted by one fact's value (the cursor is the last row's position).
import { decodeCursor } from '../../redis/index.js';
import { fleetOrder, fleetPosition, type FleetPosition, type FleetRow } from './fleet-facts.js';

/** Rows per page when the caller names no limit. */
export const FLEET_DEFAULT_PAGE = 100;

/** A page of the fleet asked for: filters, the fact to sort by (none: by project id), order, cursor, limit. */
export interface FleetFactsQuery {
  where?: string[];
  labels?: string[];
  facts?: string[];
  sort?: string;
  order?: 'asc' | 'desc';
  cursor?: string;
  limit?: number;
  /** Stops the read between slices once aborted (the api's request budget). */
  signal?: AbortSignal;
}

export interface FleetFactsPage {
  items: FleetRow[];
  nextCursor?: string;
}

/** The project id a by-project cursor names (after which project the page starts). */
export function afterProjectOf(cursor: string | undefined): string | undefined {
  return cursor ? Buffer.from(cursor, 'base64url').toString('utf8') : undefined;
}

/** A by-project page's answer: its rows, and the cursor of its last row when more follow. */
export function byProjectAnswer(items: FleetRow[], more: boolean): FleetFactsPage {
  return {
    items,
    ...(more ? { nextCursor: Buffer.from(items.at(-1)!.projectId).toString('base64url') } : {}),
  };
}

/** One page of `rows` sorted by `fact`'s value, after the cursor's position. */
export function sortedPage(
  rows: FleetRow[],
  fact: string,
  query: Pick<FleetFactsQuery, 'order' | 'cursor' | 'limit'>,
): FleetFactsPage {
  const order = fleetOrder(fact, query.order === 'desc');
  const sorted = rows
    .map((row) => ({ row, position: fleetPosition(row, fact) }))
    .sort((a, b) => order(a.position, b.position));
  const after = query.cursor ? decodeCursor(query.cursor, isFleetPosition) : undefined;
  const start = after === undefined ? 0 : sorted.findIndex(({ position }) => order(position, after) > 0);
  const limit = query.limit ?? FLEET_DEFAULT_PAGE;
  const items = start < 0 ? [] : sorted.slice(start, start + limit).map(({ row }) => row);
  const more = start >= 0 && start + limit < sorted.length;
  return {
    items,
    ...(more
      ? { nextCursor: Buffer.from(JSON.stringify(fleetPosition(items.at(-1)!, fact))).toString('base64url') }
      : {}),
  };
}

function isFleetPosition(value: unknown): value is FleetPosition {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (value[0] === null || typeof value[0] === 'string') &&
    typeof value[1] === 'string'
  );
}
