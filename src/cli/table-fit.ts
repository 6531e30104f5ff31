// How a table fits a width: columns by priority. Ids (shortened to a unique
// prefix), names and states are read first and keep their room; long text
// (a last run, an audit detail, a URL, an error) gives way first: cut with …
// while it keeps a readable width, else printed on its own line under the row.
// `-o wide` (width Infinity) keeps every value whole.
import stringWidth from 'string-width';

export const GAP = 2;

/** Long text: gives way before any other column, and goes under its row when it cannot keep DETAIL_FLOOR. */
export const DETAIL_COLUMNS = new Set([
  'LAST RUN',
  'PROJECTS',
  'DETAIL',
  'LAST',
  'URL',
  'ERROR',
  'ROOT',
  'NOTE',
  'GRANTS',
  'EVENTS',
  'LABELS',
  'WARNINGS',
  'FACTS',
  'SUMMARY / ERROR',
  'BY',
]);
const DETAIL_FLOOR = 12;
/** Text that says little when cut short (JSON, a sentence) wants more room inline. */
const DETAIL_FLOORS = new Map([
  ['DETAIL', 40],
  ['LAST RUN', 30],
  ['ERROR', 24],
  ['SUMMARY / ERROR', 24],
]);

export function detailFloor(title: string): number {
  return DETAIL_FLOORS.get(title) ?? DETAIL_FLOOR;
}

/** A generated id (`op_<uuid>`, `batch_<uuid>`): shortened to its first 8 hex digits, a unique prefix in practice. */
const GENERATED_ID = /^([a-z]+_)([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A webhook delivery's id (`<16 hex>-wh_<12 hex>`): its first 8 hex digits. */
const DELIVERY_ID = /^([0-9a-f]{8})[0-9a-f]{8}-wh_[0-9a-f]{12}$/;
/** A generated id inside long text ("… batch_0e07e306-8f26-… succeeded"). */
const GENERATED_IN_TEXT = /\b([a-z]+_[0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

/** Columns of ids a person copies into the next command besides a list's first (the audit's TARGET). */
const ID_COLUMNS = new Set(['TARGET']);

/** A list's first column is the id `show`, `cancel` and the rest take: never cut (a generated one shortens). */
export function isIdColumn(title: string, index: number): boolean {
  return index === 0 || ID_COLUMNS.has(title);
}

export function isDetailColumn(title: string, index: number): boolean {
  return index > 0 && DETAIL_COLUMNS.has(title);
}

/** `op_98e958de…` for a generated id; any other value as it is. */
export function shortId(value: string): string {
  const generated = GENERATED_ID.exec(value);
  if (generated) return `${generated[1]}${generated[2]}…`;
  const delivery = DELIVERY_ID.exec(value);
  return delivery ? `${delivery[1]}…` : value;
}

export interface TablePlan {
  /** The cells as drawn (ids maybe shortened). */
  cells: string[][];
  /** The columns in the grid, in order. */
  grid: number[];
  /** The detail columns printed under each row instead. */
  below: number[];
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

function naturalWidths(head: string[], cells: string[][]): number[] {
  return head.map((title, index) =>
    Math.max(stringWidth(title), ...cells.map((row) => stringWidth(row[index] ?? ''))),
  );
}

/** Which columns stay in the grid and which go under the row, for `width` (Infinity: all, whole). */
export function planTable(head: string[], rows: string[][], width: number): TablePlan {
  const all = head.map((_, index) => index);
  const fits = (columns: number[], need: (index: number) => number) =>
    sum(columns.map(need)) + GAP * (columns.length - 1) <= width;
  const natural = naturalWidths(head, rows);
  if (fits(all, (index) => natural[index]!)) return { cells: rows, grid: all, below: [] };
  const cells = rows.map((row) =>
    row.map((cell, index) =>
      isDetailColumn(head[index]!, index) ? cell.replace(GENERATED_IN_TEXT, '$1…') : shortId(cell),
    ),
  );
  const shortened = naturalWidths(head, cells);
  // A detail column empty in every row shows nothing: it goes before anything else gives way.
  const empty = (index: number) =>
    isDetailColumn(head[index]!, index) && cells.every((row) => (row[index] ?? '') === '');
  const shown = all.filter((index) => !empty(index));
  const detail = shown.filter((index) => isDetailColumn(head[index]!, index));
  // Inline while every detail column keeps DETAIL_FLOOR and the rest keep their whole width.
  const inline = (index: number) =>
    detail.includes(index) ? Math.min(shortened[index]!, detailFloor(head[index]!)) : shortened[index]!;
  const below = detail.length === 0 || fits(shown, inline) ? [] : detail;
  const grid = shown.filter((index) => !below.includes(index));
  // An id column besides the first (the audit's TARGET) is never cut: when the grid cannot hold
  // it whole beside the names and states, it goes under the row, whole, before the long text.
  const ids = grid.filter((index) => index > 0 && isIdColumn(head[index]!, index));
  if (ids.length === 0 || fits(grid, (index) => shortened[index]!)) return { cells, grid, below };
  return { cells, grid: grid.filter((index) => !ids.includes(index)), below: [...ids, ...below] };
}

/** `text` cut to `width` display columns, ending in … when it was longer. */
export function cutToWidth(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  let cut = '';
  for (const char of text) {
    if (stringWidth(cut + char) > width - 1) break;
    cut += char;
  }
  return `${cut}…`;
}

const INDENT = '    ';

/** How many lines a detail under its row may take before it is cut with …: JSON says little more on a second. */
const BELOW_LINES = new Map([['DETAIL', 1]]);

/** `text` at spaces into lines of `width` (a word longer than a line is cut), at most `max`, the last cut with …. */
function wrapWords(text: string, width: number, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line === '' || stringWidth(`${line} ${word}`) <= width) line = line === '' ? word : `${line} ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  const kept = lines.slice(0, max);
  if (lines.length > max) kept[max - 1] = `${kept[max - 1]} ${lines.slice(max).join(' ')}`;
  return kept.map((part) => cutToWidth(part, width));
}

/**
 * The lines printed under a row for its detail columns: `TITLE value` items,
 * short ones sharing a line, a long one wrapped under itself (two lines at
 * most, then cut with …), each indented.
 */
export function belowLines(head: string[], row: string[], below: number[], width: number): string[] {
  const lines: string[] = [];
  for (const index of below) {
    if ((row[index] ?? '') === '') continue;
    const title = head[index]!;
    const item = `${title} ${row[index]}`;
    const room = lines.findIndex((line) => stringWidth(`${line}   ${item}`) <= width);
    if (room >= 0) {
      lines[room] = `${lines[room]}   ${item}`;
      continue;
    }
    // An id is copied into the next command: whole on its own line, however narrow.
    if (ID_COLUMNS.has(title)) {
      lines.push(`${INDENT}${item}`);
      continue;
    }
    const hanging = INDENT.length + stringWidth(title) + 1;
    const [first, ...rest] = wrapWords(
      row[index]!,
      Math.max(8, width - hanging),
      BELOW_LINES.get(title) ?? 2,
    );
    lines.push(`${INDENT}${title} ${first}`, ...rest.map((part) => `${' '.repeat(hanging)}${part}`));
  }
  return lines;
}
