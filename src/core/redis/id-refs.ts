// Ids as people type them (docs/CLI.md "Ids"): a generated id (`batch_<uuid>`,
// `op_<uuid>`) whole, by a unique prefix of its hex (`8ae52e57`, with or
// without the kind's prefix), or `latest` / `latest~N` (the newest, or the
// N-th before it, in whatever scope the caller gives: a plugin, a project).
// A prefix that names several is refused listing them; one that names none is
// not found. The whole id needs no round trip.
import type { Redis } from 'ioredis';
import { InvalidInputError, NotFoundError } from '../platform/index.js';

/** Fewer hex digits than this would match too much to be meant. */
export const MIN_PREFIX_HEX = 4;
const SHOWN_MATCHES = 10;
const LATEST = /^latest(?:~(\d{1,4}))?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface IdRefScope {
  /** The id's kind prefix: `batch_`, `op_`, `rollout_`. */
  kind: string;
  /** The sorted set holding every id of the kind. */
  index: string;
  /** What to call it in errors: "batch", "operation". */
  noun: 'batch' | 'operation' | 'rollout';
  /** The id `skip` places before the newest in the caller's scope, or undefined. */
  newest(skip: number): Promise<string | undefined>;
  /** How the scope reads in an error ("of plugin x"), empty for everything. */
  scopeText?: string;
}

/** `latest~N` as N (0 for `latest`), or undefined when `ref` is not one. */
export function latestOffset(ref: string): number | undefined {
  const match = LATEST.exec(ref);
  return match ? Number(match[1] ?? 0) : undefined;
}

export function isWholeId(ref: string, kind: string): boolean {
  return ref.startsWith(kind) && UUID.test(ref.slice(kind.length));
}

/** A short id copied from a table comes with the table's ellipsis. */
function withoutEllipsis(ref: string): string {
  return ref.replace(/(?:…|\.\.\.)$/, '');
}

function isHexPrefix(text: string): boolean {
  return /^[0-9a-f-]+$/i.test(text) && text.replace(/-/g, '').length >= MIN_PREFIX_HEX;
}

/**
 * Whether `ref` must be resolved, or names its id as it is: a whole id, or one
 * with the kind's prefix that is no hex prefix (`op_1` from an api whose ids
 * are not UUIDs; an unknown one is the api's 404). Remote mode asks the api
 * only for the rest.
 */
export function needsResolving(ref: string, kind: string): boolean {
  if (isWholeId(ref, kind)) return false;
  if (!ref.startsWith(kind)) return true;
  return isHexPrefix(withoutEllipsis(ref.slice(kind.length)));
}

const PLURAL = { batch: 'batches', operation: 'operations', rollout: 'rollouts' } as const;
/** The command that lists each kind (what an unknown id's error points to). */
const LIST = { batch: 'batch list', operation: 'op list', rollout: 'rollout list' } as const;

export async function resolveIdRef(redis: Redis, given: string, scope: IdRefScope): Promise<string> {
  const ref = withoutEllipsis(given);
  if (isWholeId(ref, scope.kind)) return ref;
  const plural = PLURAL[scope.noun];
  const skip = latestOffset(ref);
  if (skip !== undefined) {
    const id = await scope.newest(skip);
    if (id) return id;
    throw new NotFoundError(
      `no ${scope.noun} is ${ref}${scope.scopeText ? ` ${scope.scopeText}` : ''} (there are fewer ${plural} kept)`,
    );
  }
  const prefixed = ref.startsWith(scope.kind);
  const hex = (prefixed ? ref.slice(scope.kind.length) : ref).toLowerCase();
  // Neither an id nor a prefix of one (`op_nope`, `shop`): unknown, as an id that names nothing is;
  // a bare prefix that is too short says why.
  if (!isHexPrefix(hex))
    throw unknown(
      ref,
      scope.noun,
      !prefixed && /^[0-9a-f-]+$/i.test(hex) ? `; a prefix needs at least ${MIN_PREFIX_HEX} hex digits` : '',
    );
  const matches = await membersWithPrefix(redis, scope.index, `${scope.kind}${hex}`);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new NotFoundError(
      `no ${scope.noun} id starts with ${JSON.stringify(ref)} (${LIST[scope.noun]} shows the known ones)`,
    );
  const shown = matches.slice(0, SHOWN_MATCHES).join(', ');
  const more = matches.length > SHOWN_MATCHES ? ` and ${matches.length - SHOWN_MATCHES} more` : '';
  throw new InvalidInputError(
    `${JSON.stringify(ref)} names ${matches.length} ${plural}: ${shown}${more}; give more of the id`,
  );
}

function unknown(ref: string, noun: IdRefScope['noun'], hint = ''): NotFoundError {
  return new NotFoundError(
    `unknown ${noun} ${JSON.stringify(ref)} (${LIST[noun]} shows the known ones${hint})`,
  );
}

/** Members of a sorted set starting with `prefix`, filtered in Redis (ZSCAN MATCH) so few cross the wire. */
async function membersWithPrefix(redis: Redis, key: string, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, flat] = await redis.zscan(key, cursor, 'MATCH', pattern, 'COUNT', 1000);
    for (let index = 0; index < flat.length; index += 2) found.add(flat[index]!);
    cursor = next;
  } while (cursor !== '0');
  return [...found].sort();
}

/**
 * The id `skip` places before the newest, paging through a filtered list
 * newest first (a filtered page may hold fewer items than asked, or none).
 */
export async function nthNewest<T extends { id: string } | { batchId: string }>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
  skip: number,
): Promise<string | undefined> {
  let left = skip;
  let cursor: string | undefined;
  for (;;) {
    const { items, nextCursor } = await page(cursor);
    if (left < items.length) {
      const item = items[left]!;
      return 'batchId' in item ? item.batchId : item.id;
    }
    left -= items.length;
    if (!nextCursor) return undefined;
    cursor = nextCursor;
  }
}
