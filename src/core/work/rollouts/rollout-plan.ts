// A rollout's plan, fixed at creation: its waves (cumulative figures of the
// selection: `1,10%,100%`) and its failure budget (`N` or `P%`). Pure.
import { InvalidInputError } from '../../platform/index.js';

/** docs/CLI.md: a canary of one project, then a tenth of the selection, then the rest. */
export const DEFAULT_WAVES = '1,10%,100%';
/** docs/CLI.md: a tenth of the selection may fail before the rollout pauses. */
export const DEFAULT_MAX_FAILURES = '10%';
/** docs/CLI.md: operations of one wave running at once. */
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 100;

const FIGURE = /^(\d{1,7})(%?)$/;

/**
 * Each wave's end, cumulative, in projects of the selection: each figure a
 * count or a share (rounded up, so a share never comes to 0), kept within
 * the selection, repeats dropped, and a last wave up to the whole selection
 * when the figures stop short of it.
 */
export function waveEnds(text: string, total: number): number[] {
  const figures = text.split(',').map((part) => part.trim());
  const ends: number[] = [];
  for (const figure of figures) {
    const match = FIGURE.exec(figure);
    if (!match)
      throw new InvalidInputError(
        `--waves ${JSON.stringify(text)}: ${JSON.stringify(figure)} is not a count or a share (e.g. --waves 1,10%,100%)`,
      );
    const value = Number(match[1]);
    if (match[2] === '%' && (value < 1 || value > 100))
      throw new InvalidInputError(`--waves: a share is from 1% to 100%, not ${figure}`);
    if (match[2] !== '%' && value < 1) throw new InvalidInputError('--waves: a count is at least 1');
    const end = Math.min(total, match[2] === '%' ? Math.ceil((total * value) / 100) : value);
    const last = ends.at(-1) ?? 0;
    if (end < last)
      throw new InvalidInputError(
        `--waves ${JSON.stringify(text)}: each figure is cumulative, so none may be smaller than the one before`,
      );
    if (end > last) ends.push(end);
  }
  if ((ends.at(-1) ?? 0) < total) ends.push(total);
  return ends;
}

/** `N` or `P%` of the selection (rounded down): the failures allowed before the rollout pauses. */
export function maxFailuresOf(text: string, total: number): number {
  const match = FIGURE.exec(text.trim());
  if (!match || (match[2] === '%' && Number(match[1]) > 100))
    throw new InvalidInputError(
      `--max-failures ${JSON.stringify(text)} must be a count (0 pauses at the first failure) or a share such as 10%`,
    );
  const value = Number(match[1]);
  return match[2] === '%' ? Math.floor((total * value) / 100) : value;
}

export function checkConcurrency(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_CONCURRENCY)
    throw new InvalidInputError(`--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}`);
  return value;
}

/** The index of the wave project number `index` (from 0) of the selection belongs to. */
export function waveOf(ends: readonly number[], index: number): number {
  const wave = ends.findIndex((end) => index < end);
  return wave === -1 ? ends.length - 1 : wave;
}
