// Fleet facts: for a plugin, the latest successful inspection of every
// project (kept by the batch-record script as batches record), asked as a
// fleet owner asks — "which projects are on Go < 1.20?", "how many on each
// version?". Filters: NAME=VALUE, NAME!=VALUE, NAME~REGEX, and NAME<VALUE,
// <=, >, >= compared as versions where both sides look like versions
// (1.9 < 1.10, v1.2.3 = 1.2.3), as numbers where both are numbers, else as
// text. A project without the fact never matches a filter on it.
// REGEX is RE2 syntax, matched in linear time (compileFactPattern): fact values
// come from project content, and a backtracking engine would let one filter
// hold the process for seconds.
import { RE2JS } from 're2js';
import { coerce, compareBuild, type SemVer } from 'semver';
import { InvalidInputError } from '../../platform/index.js';

/** One project's latest successful result of a plugin: its facts by id. */
export interface FleetRow {
  projectId: string;
  batchId: string;
  at: string;
  facts: Record<string, { value: string; warning?: string }>;
}

export const FACT_OPERATORS = ['<=', '>=', '!=', '=', '~', '<', '>'] as const;
export type FactOperator = (typeof FACT_OPERATORS)[number];

export interface FactFilter {
  fact: string;
  operator: FactOperator;
  value: string;
  /** For `~`: the compiled expression. */
  pattern?: FactPattern;
}

/** A compiled `~` expression: matches in time linear in the value's length. */
export interface FactPattern {
  test(value: string): boolean;
}

/** The longest `~` expression accepted, in characters. */
export const MAX_PATTERN_LENGTH = 256;

/**
 * The one compile of a `~` expression, for every front (CLI, api, web UI):
 * RE2 syntax (no backreferences or lookaround), at most MAX_PATTERN_LENGTH
 * characters; InvalidInputError naming what is wrong otherwise.
 */
export function compileFactPattern(source: string): FactPattern {
  if (source.length > MAX_PATTERN_LENGTH)
    throw new InvalidInputError(
      `the regular expression is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are accepted`,
    );
  try {
    return RE2JS.compile(source);
  } catch (error) {
    throw new InvalidInputError(
      `${(error as Error).message} (the expression is RE2 syntax: no backreferences or lookaround)`,
    );
  }
}

const FACT_ID = /^[A-Za-z0-9._:/-]{1,128}$/;

/** `NAME<op>VALUE` → a filter; InvalidInputError naming what is wrong. */
export function parseWhere(text: string): FactFilter {
  const match = /^\s*([^=!~<>\s]+)\s*(<=|>=|!=|=|~|<|>)\s*(.*?)\s*$/.exec(text);
  if (!match) {
    throw new InvalidInputError(
      `--where ${JSON.stringify(text)} must be NAME=VALUE, NAME!=VALUE, NAME~REGEX or NAME<VERSION (also <=, >, >=)`,
    );
  }
  const [, fact, operator, value] = match as unknown as [string, string, FactOperator, string];
  if (!FACT_ID.test(fact)) throw new InvalidInputError(`--where: ${JSON.stringify(fact)} is not a fact id`);
  if (operator !== '~') return { fact, operator, value };
  try {
    return { fact, operator, value, pattern: compileFactPattern(value) };
  } catch (error) {
    throw new InvalidInputError(`--where ${JSON.stringify(text)}: ${(error as Error).message}`);
  }
}

// What looks like a version: digits and dots, an optional v, then an optional
// pre-release or build suffix (1.2.3-rc1, 1.21rc2, 1.2.3+meta).
const VERSION = /^v?\d+(?:\.\d+)*(?:[-+]?[0-9A-Za-z][0-9A-Za-z.+-]*)?$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * A version-like value as semver reads it: `1.21rc2` (Go's form) becomes
 * `1.21.0-rc.2`, so a pre-release sorts before its release and rc2 before rc10; undefined when it
 * is not version-like.
 */
function asVersion(value: string): SemVer | undefined {
  if (!VERSION.test(value)) return undefined;
  const dashed = value.replace(/^(v?\d+(?:\.\d+)*)([A-Za-z])/, '$1-$2');
  // rc2 → rc.2 in the pre-release, so rc2 sorts before rc10 (semver compares numeric identifiers as numbers).
  const [release, ...suffix] = dashed.split('-');
  const prerelease = suffix.join('-').replace(/([A-Za-z])(\d)/g, '$1.$2');
  return coerce(prerelease ? `${release}-${prerelease}` : dashed, { includePrerelease: true }) ?? undefined;
}

/** Numeric parts past the third (1.2.3.4), which semver does not read; missing ones are 0. */
function compareFourthParts(a: string, b: string): number {
  const rest = (value: string) =>
    (/^v?\d+(?:\.\d+){3,}/.exec(value)?.[0] ?? '').split('.').slice(3).map(Number);
  const [ra, rb] = [rest(a), rest(b)];
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    const diff = (ra[i] ?? 0) - (rb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * Negative, zero or positive as `a` sorts before, with or after `b`: as
 * versions (the semver package: 1.9 < 1.10, 1.2.3-rc1 < 1.2.3, v1.2.3 = 1.2.3)
 * where both look like versions and one has a dot or a v, as numbers where
 * both are numbers, else as text.
 */
export function compareFactValues(a: string, b: string): number {
  const dotted = a.includes('.') || b.includes('.') || a.startsWith('v') || b.startsWith('v');
  const va = dotted ? asVersion(a) : undefined;
  const vb = va ? asVersion(b) : undefined;
  if (va && vb) {
    return compareBuild(va, vb) || compareFourthParts(a, b);
  }
  if (NUMBER.test(a) && NUMBER.test(b)) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function matchesFilter(filter: FactFilter, value: string | undefined): boolean {
  if (value === undefined) return false;
  switch (filter.operator) {
    case '=':
      return compareFactValues(value, filter.value) === 0;
    case '!=':
      return compareFactValues(value, filter.value) !== 0;
    case '~':
      return filter.pattern!.test(value);
    case '<':
      return compareFactValues(value, filter.value) < 0;
    case '<=':
      return compareFactValues(value, filter.value) <= 0;
    case '>':
      return compareFactValues(value, filter.value) > 0;
    case '>=':
      return compareFactValues(value, filter.value) >= 0;
  }
}

/**
 * The order of project ids in the fleet's pages: a project id's characters
 * ([a-z0-9._-]) as `localeCompare` orders them (the order the fleet always
 * had: `_` < `-` < `.` < digits < letters), as plain code-unit order of a key
 * where `_` becomes `,` (below `-`, and in no id). Redis orders the fleet
 * index by these keys (ZRANGEBYLEX), so a page reads only its own rows.
 */
export function fleetIdKey(projectId: string): string {
  return projectId.replaceAll('_', ',');
}

/** The project id of a fleet index key. */
export function projectIdOfKey(key: string): string {
  return key.replaceAll(',', '_');
}

/** Negative, zero or positive as project `a` comes before, with or after `b` in the fleet's pages. */
export function compareProjectIds(a: string, b: string): number {
  const ka = fleetIdKey(a);
  const kb = fleetIdKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Whether the row passes every filter and (when given) its project is among `projects`. */
export function rowMatches(
  row: FleetRow,
  filters: readonly FactFilter[],
  projects?: ReadonlySet<string>,
): boolean {
  if (projects && !projects.has(row.projectId)) return false;
  return filters.every((filter) => matchesFilter(filter, row.facts[filter.fact]?.value));
}

/** The rows every filter matches (and, when given, whose project is among `projects`), by project id. */
export function filterFleet(
  rows: Iterable<FleetRow>,
  filters: readonly FactFilter[],
  projects?: ReadonlySet<string>,
): FleetRow[] {
  const kept: FleetRow[] = [];
  for (const row of rows) if (rowMatches(row, filters, projects)) kept.push(row);
  return kept.sort((a, b) => compareProjectIds(a.projectId, b.projectId));
}

/**
 * Value → how many of the rows have it: projects without the fact (`null`,
 * shown as `(none)`) first, then the values most common first, equal counts
 * in value order (versions as versions: 1.9 before 1.10, 1.21rc2 before 1.21.0).
 */
export function countFactValues(
  rows: readonly FleetRow[],
  fact: string,
): { value: string | null; count: number }[] {
  const counts = new Map<string | null, number>();
  for (const row of rows) {
    const value = row.facts[fact]?.value ?? null;
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts].map(([value, count]) => ({ value, count })).sort(byCountNoneFirst);
}

/** `(none)` (null) first, then most common first, equal counts in value order. */
export function byCountNoneFirst(
  a: { value: string | null; count: number },
  b: { value: string | null; count: number },
): number {
  if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : -1) : 1;
  return b.count - a.count || compareFactValues(a.value, b.value);
}

/** The fact ids any row has. */
export function factIdsOf(rows: Iterable<FleetRow>): Set<string> {
  const ids = new Set<string>();
  for (const row of rows) for (const id of Object.keys(row.facts)) ids.add(id);
  return ids;
}

/** The known fact listed in the message about an unknown one: at most this many. */
const KNOWN_FACTS_LISTED = 20;

/** "unknown fact X: did you mean Y? the plugin's projects have: …", for a fact name none has. */
export function unknownFactMessage(pluginId: string, fact: string, known: ReadonlySet<string>): string {
  const sorted = [...known].sort();
  const near = closestName(fact, sorted);
  const listed = sorted.slice(0, KNOWN_FACTS_LISTED).join(', ');
  const more = sorted.length > KNOWN_FACTS_LISTED ? ` and ${sorted.length - KNOWN_FACTS_LISTED} more` : '';
  return `no project of ${pluginId} has a fact ${JSON.stringify(fact)}${near ? `: did you mean ${near}?` : ''} (known facts: ${listed}${more})`;
}

/** The name within a third of its length in edits (at least 1, as "did you mean" for commands), if any. */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** Where a row stands in a sorted fleet: its value of the sort fact (null: none) and its project id. */
export type FleetPosition = [value: string | null, projectId: string];

/**
 * A fleet ordered by one fact's value (versions, numbers, then text;
 * `descending` reverses it), ties and rows without the fact by project id,
 * rows without the fact last in either order.
 */
export function fleetOrder(fact: string, descending = false): (a: FleetPosition, b: FleetPosition) => number {
  return ([va, pa], [vb, pb]) => {
    if (va !== vb) {
      if (va === null) return 1;
      if (vb === null) return -1;
      const order = compareFactValues(va, vb);
      if (order !== 0) return descending ? -order : order;
    }
    return pa < pb ? -1 : pa > pb ? 1 : 0;
  };
}

/** The row's position under a sort by `fact`. */
export function fleetPosition(row: FleetRow, fact: string): FleetPosition {
  return [row.facts[fact]?.value ?? null, row.projectId];
}
