// Option parsing that fails with exit 2 and a message naming what to fix.
import { InvalidArgumentError } from 'commander';
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import { InvalidInputError } from '../core/errors.js';

/** An integer option from `min` to `max`; anything else fails with `problem`. */
function integerIn(min: number, max: number, problem: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) throw new InvalidArgumentError(problem);
    return parsed;
  };
}

export function positiveInt(name: string) {
  return integerIn(1, Infinity, `${name} must be a positive integer`);
}

/** Node's timers take at most 2^31 - 1 ms; a longer one fires at once (with only a warning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration in ms that a timer can wait: 1 to MAX_TIMER_MS. */
export function milliseconds(name: string) {
  return integerIn(
    1,
    MAX_TIMER_MS,
    `${name} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
  );
}

/** 0 to `max`. */
export function nonNegativeInt(name: string, max: number) {
  return integerIn(0, max, `${name} must be an integer from 0 to ${max}`);
}

export function requireYes(yes: boolean | undefined, command: string): void {
  if (!yes)
    throw new InvalidInputError(
      `this changes what code may run; confirm with --yes: switchyard ${command} --yes`,
    );
}

export function parseJsonInput(text: string | undefined): JsonValue {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new InvalidInputError(
      `--input is not valid JSON (${(error as Error).message}); example: --input '{"key":"value"}'`,
    );
  }
}
