// How much of one call's stderr goes into the plugin's log (PROTOCOL §9.6:
// bounded per call, as before: at most STDERR_LINES lines). Lines arrive
// live; the first ones are kept as they come, and once the budget is spent
// only the newest few are held back and written when the call ends, after a
// note saying how many were left out, so a call's end is always there.
import { STDERR_LINES } from './stderr-tail.js';

const TAIL_LINES = 20;

export class StderrBudget {
  #live = STDERR_LINES - TAIL_LINES;
  #tail: string[] = [];
  #left = 0;

  /** The lines to write now; the rest are counted, the newest of them held for the end. */
  take(lines: string[]): string[] {
    const now = lines.slice(0, Math.max(0, this.#live));
    this.#live -= now.length;
    const later = lines.slice(now.length);
    if (later.length > 0) {
      this.#tail.push(...later);
      const over = this.#tail.length - TAIL_LINES;
      if (over > 0) {
        this.#tail.splice(0, over);
        this.#left += over;
      }
    }
    return now;
  }

  /** What the end of the call adds: the note (when lines were left out) and the held newest lines. */
  end(where?: string): string[] {
    const note =
      this.#left > 0
        ? [`[${this.#left} lines of this call's stderr are not kept here${where ? `; ${where}` : ''}]`]
        : [];
    const out = [...note, ...this.#tail];
    this.#tail = [];
    this.#left = 0;
    return out;
  }
}
