// Cursor pagination for the lists that grow without bound (batches,
// operations, audit). A cursor is opaque to clients: base64url JSON of the
// last position examined (score and member of a sorted set, or a stream id).
// Filters are applied while scanning, newest first; one page examines at most
// SCAN_BUDGET entries, so a filter that matches nothing in 100,000 entries
// still answers quickly — with fewer items (possibly none) and a nextCursor to
// continue from. No nextCursor means the list is exhausted.
import type { Redis } from 'ioredis';
import { InvalidInputError } from '../platform/index.js';

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 500;
/** Entries one page request examines at most (filters that match rarely). */
export const SCAN_BUDGET = 5_000;
const CHUNK = 200;

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new InvalidInputError(`limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`);
  return limit;
}

export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor<T>(cursor: string, valid: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!valid(value))
    throw new InvalidInputError('cursor is not one this list returned (pass nextCursor unchanged)');
  return value;
}

interface ZPosition {
  s: number;
  m: string;
}
const isZPosition = (value: unknown): value is ZPosition =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ZPosition).s === 'number' &&
  typeof (value as ZPosition).m === 'string';

/**
 * One page of a sorted set read newest (highest score) first. `load` turns a
 * chunk of members into records (undefined: gone), `accept` is the filter.
 */
export async function sortedSetPage<T>(
  redis: Redis,
  key: string,
  request: PageRequest,
  load: (members: string[]) => Promise<(T | undefined)[]>,
  accept: (record: T) => boolean = () => true,
): Promise<Page<T>> {
  const limit = pageLimit(request.limit);
  const after = request.cursor ? decodeCursor(request.cursor, isZPosition) : undefined;
  const max = after ? String(after.s) : '+inf';
  const items: T[] = [];
  let examined = 0;
  let offset = 0;
  let last: ZPosition | undefined;
  for (;;) {
    const raw = await redis.zrevrangebyscore(key, max, '-inf', 'WITHSCORES', 'LIMIT', offset, CHUNK);
    if (raw.length === 0) return { items };
    offset += raw.length / 2;
    const positions: ZPosition[] = [];
    for (let index = 0; index < raw.length; index += 2) {
      const position = { m: raw[index]!, s: Number(raw[index + 1]) };
      // Same score as the cursor: reverse lexical order, so members at or above it were already served.
      if (after && position.s === after.s && position.m >= after.m) continue;
      positions.push(position);
    }
    const records = await load(positions.map((position) => position.m));
    for (const [index, record] of records.entries()) {
      examined += 1;
      last = positions[index]!;
      if (record !== undefined && accept(record)) items.push(record);
      if (items.length === limit || examined >= SCAN_BUDGET) return { items, nextCursor: encodeCursor(last) };
    }
  }
}

const isStreamId = (value: unknown): value is string => typeof value === 'string' && /^\d+-\d+$/.test(value);

/**
 * One page of a stream read newest first, optionally not older than
 * `sinceMs` nor newer than `untilMs` (epoch ms). `parse` turns an entry into
 * a record; `accept` is the filter.
 */
export async function streamPage<T>(
  redis: Redis,
  key: string,
  request: PageRequest & { sinceMs?: number | undefined; untilMs?: number | undefined },
  parse: (id: string, fields: string[]) => T,
  accept: (record: T) => boolean = () => true,
): Promise<Page<T>> {
  const limit = pageLimit(request.limit);
  // An id of milliseconds alone ends at that millisecond's last entry.
  let end = request.cursor
    ? `(${decodeCursor(request.cursor, isStreamId)}`
    : request.untilMs !== undefined
      ? String(Math.max(0, Math.floor(request.untilMs)))
      : '+';
  const start = request.sinceMs !== undefined ? `${Math.max(0, Math.floor(request.sinceMs))}-0` : '-';
  const items: T[] = [];
  let examined = 0;
  for (;;) {
    const rows = await redis.xrevrange(key, end, start, 'COUNT', CHUNK);
    if (rows.length === 0) return { items };
    for (const [id, fields] of rows) {
      examined += 1;
      const record = parse(id, fields);
      if (accept(record)) items.push(record);
      if (items.length === limit || examined >= SCAN_BUDGET) return { items, nextCursor: encodeCursor(id) };
    }
    end = `(${rows[rows.length - 1]![0]}`;
  }
}
