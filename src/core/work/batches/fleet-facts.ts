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

const VERSION = /^v?(\d+(?:\.\d+)*)(?:[-+].*)?$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** Negative, zero or positive as `a` sorts before, with or after `b` (versions, numbers, then text). */
export function compareFactValues(a: string, b: string): number {
  const va = VERSION.exec(a);
  const vb = VERSION.exec(b);
  if (va && vb && (a.includes('.') || b.includes('.') || a.startsWith('v') || b.startsWith('v'))) {
    const pa = va[1]!.split('.').map(Number);
    const pb = vb[1]!.split('.').map(Number);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
      if (diff !== 0) return diff;
    }
    return 0;
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

/** Value → how many of the rows have it (a row without the fact counts under `null`), most common first. */
export function countFactValues(
  rows: readonly FleetRow[],
  fact: string,
): { value: string | null; count: number }[] {
  const counts = new Map<string | null, number>();
  for (const row of rows) {
    const value = row.facts[fact]?.value ?? null;
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort(
      (a, b) =>
        b.count - a.count ||
        (a.value === null ? 1 : b.value === null ? -1 : compareFactValues(a.value, b.value)),
    );
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
