// Time limits of plugin calls as host policy (PROTOCOL §9.5, CLI.md `plugin
// set`): per plugin, stored with its record; defaults inspect 15s, operate
// 15m, health 10s. An operation may ask for less, never more; a worker's
// --call-timeout caps every call it runs.
import ms from 'ms';
import type { MethodName } from '@switchyard/plugin-sdk/host';
import { InvalidInputError } from '../platform/index.js';

export interface TimeLimits {
  inspectMs: number;
  operateMs: number;
  healthMs: number;
}

/** What an admin set for one plugin (unset: the default). */
export type TimeLimitSettings = Partial<Pick<TimeLimits, 'inspectMs' | 'operateMs'>>;

export const DEFAULT_TIME_LIMITS: TimeLimits = {
  inspectMs: 15_000,
  operateMs: 15 * 60_000,
  healthMs: 10_000,
};

/** Node's timers take at most 2^31 - 1 ms. */
export const MAX_LIMIT_MS = 2 ** 31 - 1;

/** A worker's cap on any one call when `worker --call-timeout` is not given. */
export const DEFAULT_CALL_CAP_MS = 2 * 60 * 60_000;

export function timeLimitsOf(settings: TimeLimitSettings | undefined): TimeLimits {
  return { ...DEFAULT_TIME_LIMITS, ...settings };
}

export function limitFor(limits: TimeLimits, method: Exclude<MethodName, 'initialize'>): number {
  if (method === 'project.inspect') return limits.inspectMs;
  if (method === 'project.operate') return limits.operateMs;
  return limits.healthMs;
}

/** `15m`, `1h 30m`-free short form (the `ms` package's) for messages. */
export function formatLimit(value: number): string {
  return ms(value);
}

/** Checks an admin's new limits (whole ms, 1 s to MAX_LIMIT_MS). */
export function checkSettings(settings: TimeLimitSettings): TimeLimitSettings {
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1_000 || value > MAX_LIMIT_MS) {
      throw new InvalidInputError(
        `${name === 'inspectMs' ? 'inspect' : 'operate'} timeout must be from 1s to ${MAX_LIMIT_MS} ms`,
      );
    }
  }
  return settings;
}

/** An operation may only shorten its plugin's operate limit. */
export function checkOperationTimeout(pluginId: string, limits: TimeLimits, timeoutMs: number): void {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new InvalidInputError('the timeout must be a positive whole number of milliseconds');
  }
  if (timeoutMs > limits.operateMs) {
    throw new InvalidInputError(
      `the timeout ${formatLimit(timeoutMs)} is longer than plugin ${pluginId}'s operate limit of ${formatLimit(limits.operateMs)}; ` +
        `an operation may only shorten it (an admin raises it with \`plugin set ${pluginId} --operate-timeout <duration>\`)`,
    );
  }
}
