// Output helpers: exactly one JSON document with --json; aligned tables otherwise.
import Table from 'cli-table3';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(head: string[], rows: (string | number | boolean | undefined)[][]): void {
  const table = new Table({
    head,
    style: { head: [], border: [] },
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
      middle: '  ',
    },
  });
  for (const row of rows) table.push(row.map((cell) => (cell === undefined ? '' : String(cell))));
  process.stdout.write(`${table.toString()}\n`);
}

export function printFields(fields: [string, string | number | boolean | undefined][]): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) {
    if (value === undefined || value === '') continue;
    process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
  }
}

export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** --json: the value as one document; otherwise the human rendering. */
export function emit(json: boolean, value: unknown, human: () => void): void {
  if (json) printJson(value);
  else human();
}
