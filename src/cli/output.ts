// Output helpers: exactly one JSON document with --json; otherwise aligned
// tables that fit the terminal, with every string that came from a plugin, a
// package, a project or a user made terminal-safe (no control sequence of
// theirs can move the cursor or draw over what we print).
import Table from 'cli-table3';
import { Help } from 'commander';
import ms from 'ms';
import stringWidth from 'string-width';
import { escapeControl, escapeControlKeepingLines } from '../core/safety/index.js';
import { GAP, belowLines, detailFloor, isDetailColumn, isIdColumn, planTable } from './table-fit.js';

type Cell = string | number | boolean | undefined;

export { escapeControl, escapeControlKeepingLines };

/** One line of human output on stdout, terminal-safe. */
export function say(text: string): void {
  process.stdout.write(`${escapeControl(text)}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The width tables must fit: the terminal's; off a terminal COLUMNS when it
 * is set, else no limit at all: scripts and pipes get whole values.
 */
export function outputWidth(): number {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const fromEnv = Number(process.env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return process.stdout.isTTY ? 100 : Infinity;
}

/** Never cut: a state, a trust, a health, a count or a relative time is read whole or not at all. */
const WHOLE_COLUMNS = new Set([
  'STATE',
  'OUTCOME',
  'TRUST',
  'ENABLED',
  'HEALTH',
  'PROGRESS',
  'RESULTS',
  'STATUS',
  'CREATED',
  'REQUESTED',
  'WHEN',
  'TIME',
  'NEXT RUN',
]);

const FINGERPRINT = /[0-9a-f]{64}/;
const FINGERPRINTS = /([0-9a-f]{64})/;
const FINGERPRINT_WIDTH = 64;

/**
 * Column widths that fit `width`. The widest column gives way first, down to
 * its floor in `floors[0]` (a short column stays readable, a fingerprint
 * column keeps a whole fingerprint per line); only if that is not enough,
 * down to `floors[1]`. Past that the table overflows rather than hide more.
 */
export function fitColumns(natural: number[], floors: number[][], width: number): number[] {
  const widths = [...natural];
  const budget = width - GAP * (widths.length - 1);
  let total = widths.reduce((sum, value) => sum + value, 0);
  for (const floor of floors) {
    while (total > budget) {
      let widest = -1;
      for (let index = 0; index < widths.length; index++) {
        if (widths[index]! > floor[index]! && (widest < 0 || widths[index]! > widths[widest]!))
          widest = index;
      }
      if (widest < 0) break;
      widths[widest]!--;
      total--;
    }
  }
  return widths;
}

/**
 * A cell that holds a fingerprint is wrapped, never cut: at spaces where it
 * can, inside other long words where it must, and a fingerprint stays on one
 * line whenever the column is wide enough for one.
 */
export function wrapKeepingFingerprints(text: string, width: number): string {
  const atoms: string[] = [];
  for (const piece of text.split(FINGERPRINTS)) {
    if (FINGERPRINT.test(piece) && piece.length === FINGERPRINT_WIDTH) atoms.push(piece);
    else atoms.push(...piece.split(/( )/).filter((word) => word !== ''));
  }
  const lines: string[] = [];
  let line = '';
  const flush = () => {
    if (line.trim() !== '') lines.push(line.trimEnd());
    line = '';
  };
  for (const atom of atoms) {
    if (stringWidth(line + atom) <= width) {
      line += atom;
      continue;
    }
    if (atom === ' ') {
      flush();
      continue;
    }
    if (stringWidth(atom) <= width) {
      flush();
      line = atom;
      continue;
    }
    // Longer than a line: split it, whole across lines.
    flush();
    for (const char of atom) {
      if (stringWidth(line + char) > width) flush();
      line += char;
    }
  }
  flush();
  return lines.join('\n');
}

/** `-o wide`: tables keep every value whole, whatever the width. */
let wideTables = false;

export function setWideTables(wide: boolean): void {
  wideTables = wide;
}

/** The width a table must fit: the output's, or none with `-o wide`. */
function tableWidth(): number {
  return wideTables ? Infinity : outputWidth();
}

export function printTable(head: string[], rows: Cell[][]): void {
  const width = tableWidth();
  const plan = planTable(
    head,
    rows.map((row) => row.map((cell) => escapeControl(cell === undefined ? '' : String(cell)))),
    width,
  );
  const gridHead = plan.grid.map((index) => head[index]!);
  const gridCells = plan.cells.map((row) => plan.grid.map((index) => row[index] ?? ''));
  const widths = gridWidths(gridHead, gridCells, width);
  const draw = (row: string[]) =>
    newTable(widths, row)
      .toString()
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n');
  const lines = [draw(gridHead)];
  plan.cells.forEach((row, index) => {
    lines.push(
      draw(
        gridCells[index]!.map((cell, column) =>
          FINGERPRINT.test(cell) && stringWidth(cell) > widths[column]!
            ? wrapKeepingFingerprints(cell, widths[column]!)
            : cell,
        ),
      ),
      ...belowLines(head, row, plan.below, width),
    );
  });
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * The grid's column widths: long text gives way first (to DETAIL_FLOOR), then
 * the widest column, down to floors that keep a short column readable and a
 * fingerprint whole per line; ids and states are never cut.
 */
function gridWidths(head: string[], cells: string[][], width: number): number[] {
  const natural = head.map((title, index) =>
    Math.max(stringWidth(title), ...cells.map((row) => stringWidth(row[index] ?? ''))),
  );
  const holdsFingerprint = head.map((_, index) => cells.some((row) => FINGERPRINT.test(row[index] ?? '')));
  const kept = (title: string, index: number) => isIdColumn(title, index) || WHOLE_COLUMNS.has(title);
  const floor = (natural: number, index: number, fingerprint: number, other: number) =>
    kept(head[index]!, index) ? natural : Math.min(natural, holdsFingerprint[index] ? fingerprint : other);
  // The widest value of a column that is never cut: its title may give way (ENAB…), its values not.
  const valuesWidth = head.map((_, index) =>
    Math.max(5, ...cells.map((row) => stringWidth(row[index] ?? ''))),
  );
  const floors = [
    natural.map((value, index) =>
      isDetailColumn(head[index]!, index)
        ? floor(value, index, FINGERPRINT_WIDTH, detailFloor(head[index]!))
        : value,
    ),
    natural.map((value, index) => floor(value, index, FINGERPRINT_WIDTH, 16)),
    natural.map((value, index) => floor(value, index, 20, 6)),
    natural.map((value, index) =>
      WHOLE_COLUMNS.has(head[index]!) ? Math.min(value, valuesWidth[index]!) : floor(value, index, 20, 4),
    ),
  ];
  return fitColumns(natural, floors, width);
}

function newTable(widths: number[], row: string[]): Table.Table {
  const table = new Table({
    colWidths: widths,
    wordWrap: false,
    truncate: '…',
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: ' '.repeat(GAP),
    },
  });
  table.push(row);
  return table;
}

/** Name: value lines; a value given as lines prints each under the first, aligned (each line terminal-safe). */
export function printFields(fields: [string, Cell | readonly string[]][]): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) {
    if (value === undefined || value === '') continue;
    const [first, ...rest] = Array.isArray(value) ? (value as readonly string[]) : [String(value)];
    process.stdout.write(`${name.padEnd(width)}  ${escapeControl(first ?? '')}\n`);
    for (const line of rest) process.stdout.write(`${' '.repeat(width)}  ${escapeControl(line)}\n`);
  }
}

/** A message on stderr (terminal-safe; our own line breaks kept). */
export function note(message: string): void {
  process.stderr.write(`${escapeControlKeepingLines(message)}\n`);
}

/** "3m ago" / "in 2h" for a timestamp, relative to now; undefined stays undefined. */
export function ago(iso: string | undefined, now = Date.now()): string | undefined {
  if (!iso) return undefined;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const delta = now - at;
  if (Math.abs(delta) < 1_000) return 'just now';
  return delta > 0 ? `${ms(delta)} ago` : `in ${ms(-delta)}`;
}

/** An ISO time with its relative form, for detail views: "2026-…Z (3m ago)". */
export function whenWithAgo(iso: string | undefined): string | undefined {
  return iso ? `${iso} (${ago(iso)})` : undefined;
}

/** A failure as people read it: the message first, the code in the details ("unknown action x (PLUGIN_ERROR)"). */
export function errorText(code: string, message: string | undefined): string {
  if (!message) return code;
  // A plugin's own error is stored as "plugin error -32000: <its message>": its message leads, the codes follow.
  const rpc = /^plugin error (-?\d+): ([\s\S]*)$/.exec(message);
  return rpc ? `${rpc[2]} (${code} ${rpc[1]})` : `${message} (${code})`;
}

/** A batch's results in one short column: "3✓ 1✗ /4"; BATCH_RESULTS_LEGEND says what the marks are. */
export function batchResults(counts: {
  total: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  pending: number;
}): string {
  const parts = [`${counts.succeeded}✓`, `${counts.failed}✗`];
  if (counts.cancelled) parts.push(`${counts.cancelled}⊘`);
  if (counts.pending) parts.push(`${counts.pending}…`);
  return `${parts.join(' ')} /${counts.total}`;
}

export const BATCH_RESULTS_LEGEND = '✓ succeeded  ✗ failed  ⊘ cancelled  … pending  /total';

/** --json: the value as one document; otherwise the human rendering. */
export function emit(json: boolean, value: unknown, human: () => void): void {
  if (json) printJson(value);
  else human();
}

/** The width help is wrapped to: the terminal's or COLUMNS, else 80; never under 40. */
export function helpWidth(): number {
  const width = outputWidth();
  return Math.max(40, Number.isFinite(width) ? width : 80);
}

/** At least this much room beside the terms, or a description goes under its term. */
const MIN_DESCRIPTION_WIDTH = 36;

/**
 * Commander help that fits the terminal: descriptions wrapped beside their
 * terms when there is room, otherwise on the lines under the term, indented.
 */
export const helpConfiguration: Partial<Help> = {
  minWidthToWrap: 20,
  formatItem(term: string, termWidth: number, description: string, helper: Help): string {
    const width = helper.helpWidth ?? helpWidth();
    if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH)
      return Help.prototype.formatItem.call(helper, term, termWidth, description, helper);
    const indent = ' '.repeat(6);
    const wrapped = helper.boxWrap(description, width - indent.length);
    return `  ${term}\n${indent}${wrapped.replace(/\n/g, `\n${indent}`)}`;
  },
};
