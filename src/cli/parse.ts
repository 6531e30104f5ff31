// Option parsing that fails with exit 2 and a message naming what to fix.
import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import { InvalidInputError, MAX_LIST_LIMIT } from '../core/platform/index.js';
import { cronProblem } from '../core/work/upkeep/index.js';

/** An integer option from `min` to `max`; anything else fails with `problem`. */
function integerIn(min: number, max: number, problem: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) throw new InvalidArgumentError(problem);
    return parsed;
  };
}

/** Commander's accumulator for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function positiveInt(name: string) {
  return integerIn(1, Infinity, `${name} must be a positive integer`);
}

/** How many entries a list shows: 1 to MAX_LIST_LIMIT, as the api accepts. */
export function listLimit(name: string) {
  return integerIn(1, MAX_LIST_LIMIT, `${name} must be an integer from 1 to ${MAX_LIST_LIMIT}`);
}

/** Node's timers take at most 2^31 - 1 ms; a longer one fires at once (with only a warning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const DURATION_FORMS = '500ms, 30s, 15m or 2h; a bare number is milliseconds';

/**
 * A duration written `500ms`, `30s`, `15m`, `2h` (the `ms` package's forms) or
 * a bare number of milliseconds; undefined when it is neither.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/^\d+(\.\d+)?\s*[a-z]+$/i.test(trimmed)) return undefined;
  const value = ms(trimmed as ms.StringValue);
  return typeof value === 'number' && Number.isFinite(value) && Number.isInteger(value) ? value : undefined;
}

/** A duration option from `min` to `max` ms; anything else fails with `problem`. */
export function durationIn(min: number, max: number, problem: string) {
  return (value: string): number => {
    const parsed = parseDuration(value);
    if (parsed === undefined || parsed < min || parsed > max) throw new InvalidArgumentError(problem);
    return parsed;
  };
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** A size written `512MiB`, `2G`, `1.5GiB` (units of 1024) or a bare number of bytes; undefined otherwise. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = SIZE_UNITS[(match[2] || 'b').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A size option from `min` to `max` bytes. */
export function sizeFrom(name: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = parseSize(value);
    if (parsed === undefined || parsed < min || parsed > max)
      throw new InvalidArgumentError(
        `${name} must be a size from ${min} to ${max} bytes (512MiB, 2GiB, 64M; units of 1024; a bare number is bytes)`,
      );
    return parsed;
  };
}

/** An integer option from `min` to `max`. */
export function integerFrom(name: string, min: number, max: number) {
  return integerIn(min, max, `${name} must be an integer from ${min} to ${max}`);
}

/** 100 years: the longest look back a filter takes (it is not a timer). */
const MAX_LOOK_BACK_MS = 100 * 365 * 86_400_000;

/**
 * `--since`: how far back, as a duration (`30d`, `2h`) or a date or time
 * (`2026-11-01`, `2026-11-01T09:30`, ISO 8601 with an offset); the number of
 * milliseconds back from now. A filter, not a timer: no 2^31 ms cap.
 */
export function sinceFrom(name: string) {
  return (value: string): number => {
    const duration = parseDuration(value);
    if (duration !== undefined && duration >= 1 && duration <= MAX_LOOK_BACK_MS) return duration;
    if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
      const at = Date.parse(value.trim());
      if (!Number.isNaN(at)) {
        const back = Date.now() - at;
        if (back <= 0) throw new InvalidArgumentError(`${name} ${value} is in the future`);
        return back;
      }
    }
    throw new InvalidArgumentError(
      `${name} must be a duration (30s, 15m, 2h, 30d) or a date or time (2026-11-01, 2026-11-01T09:30Z)`,
    );
  };
}

/** A duration that a timer can wait: 1 ms to MAX_TIMER_MS (`30s`, `15m`, or ms). */
export function milliseconds(name: string) {
  return durationIn(
    1,
    MAX_TIMER_MS,
    `${name} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (or a duration: ${DURATION_FORMS})`,
  );
}

/** A duration of at least `min` ms that a timer can wait. */
export function durationFrom(name: string, min: number) {
  return durationIn(
    min,
    MAX_TIMER_MS,
    `${name} must be a duration from ${ms(min)} to ${MAX_TIMER_MS} ms (${DURATION_FORMS})`,
  );
}

/** 0 to `max`. */
export function nonNegativeInt(name: string, max: number) {
  return integerIn(0, max, `${name} must be an integer from 0 to ${max}`);
}

/** `why`: what the command does that needs a person's yes (trust and enable: what code may run). */
export function requireYes(
  yes: boolean | undefined,
  command: string,
  why = 'this changes what code may run',
): void {
  if (!yes) throw new InvalidInputError(`${why}; confirm with --yes: switchyard ${command} --yes`);
}

/** `run --input`: one JSON object, `{}` when none is given (as the original host sends it). */
export function parseJsonInput(text: string | undefined): { [key: string]: JsonValue } {
  if (text === undefined) return {};
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new InvalidInputError(
      `--input is not valid JSON (${(error as Error).message}); example: --input '{"key":"value"}'`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidInputError(`--input must be one JSON object; example: --input '{"key":"value"}'`);
  return value;
}

/** A cron pattern, checked before anything is saved. */
export function cronPattern(name: string) {
  return (value: string): string => {
    const problem = cronProblem(value);
    if (problem)
      throw new InvalidArgumentError(
        `${name} ${JSON.stringify(value)} is not a cron pattern (${problem}); example: ${name} "0 3 * * *"`,
      );
    return value;
  };
}

/** One of a fixed set of words. */
export function oneOf<T extends string>(name: string, values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}`);
    return value as T;
  };
}
