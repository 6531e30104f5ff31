// Output helpers: exactly one JSON document with --json; otherwise aligned
// tables that fit the terminal, with every string that came from a plugin, a
// package, a project or a user made terminal-safe (no control sequence of
// theirs can move the cursor or draw over what we print).
import Table from 'cli-table3';
import ms from 'ms';
import stringWidth from 'string-width';
import { escapeControl, escapeControlKeepingLines } from '../core/terminal-safe.js';

type Cell = string | number | boolean | undefined;

export { escapeControl, escapeControlKeepingLines };

/** One line of human output on stdout, terminal-safe. */
export function say(text: string): void {
  process.stdout.write(`${escapeControl(text)}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The width tables must fit: the terminal's, else COLUMNS, else 100. */
export function outputWidth(): number {
  const fromEnv = Number(process.env.COLUMNS);
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 100;
}

const GAP = 2;
const MIN_COLUMN = 6;
const FINGERPRINT = /[0-9a-f]{64}/;
const FINGERPRINT_WIDTH = 64;

/**
 * Column widths that fit `width`: the widest columns give way first, down to
 * MIN_COLUMN; a column holding a fingerprint keeps room for one whole.
 */
export function fitColumns(natural: number[], minimum: number[], width: number): number[] {
  const widths = [...natural];
  const budget = width - GAP * (widths.length - 1);
  let total = widths.reduce((sum, value) => sum + value, 0);
  while (total > budget) {
    let widest = -1;
    for (let index = 0; index < widths.length; index++) {
      if (widths[index]! > minimum[index]! && (widest < 0 || widths[index]! > widths[widest]!))
        widest = index;
    }
    if (widest < 0) break; // cannot shrink further: let it overflow rather than hide a fingerprint
    widths[widest]!--;
    total--;
  }
  return widths;
}

/** A cell that holds a fingerprint is wrapped at spaces, never cut. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    if (current && stringWidth(`${current} ${word}`) > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  lines.push(current);
  return lines.join('\n');
}

export function printTable(head: string[], rows: Cell[][]): void {
  const cells = rows.map((row) => row.map((cell) => escapeControl(cell === undefined ? '' : String(cell))));
  const natural = head.map((title, index) =>
    Math.max(stringWidth(title), ...cells.map((row) => stringWidth(row[index] ?? ''))),
  );
  const minimum = head.map((title, index) =>
    Math.min(
      natural[index]!,
      cells.some((row) => FINGERPRINT.test(row[index] ?? ''))
        ? FINGERPRINT_WIDTH
        : Math.max(MIN_COLUMN, Math.min(stringWidth(title), 12)),
    ),
  );
  const widths = fitColumns(natural, minimum, outputWidth());
  const table = new Table({
    head,
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
  for (const row of cells)
    table.push(
      row.map((cell, index) =>
        FINGERPRINT.test(cell) && stringWidth(cell) > widths[index]! ? wrap(cell, widths[index]!) : cell,
      ),
    );
  const text = table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
  process.stdout.write(`${text}\n`);
}

export function printFields(fields: [string, Cell][]): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) {
    if (value === undefined || value === '') continue;
    process.stdout.write(`${name.padEnd(width)}  ${escapeControl(String(value))}\n`);
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

/** --json: the value as one document; otherwise the human rendering. */
export function emit(json: boolean, value: unknown, human: () => void): void {
  if (json) printJson(value);
  else human();
}
