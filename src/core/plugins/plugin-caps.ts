// Installation-wide caps on one plugin's calls (CLI.md `plugin set
// --max-concurrency/--rate`): no more than N at once and R per second or
// minute across every worker on every machine, as a code host's API demands.
// Both are Redis sorted sets changed by one script each (cap-acquire.lua,
// cap-renew.lua), so workers never race: a holder has a lease it renews while
// its call runs, and a worker killed with -9 loses its slot when the lease
// ends (the job lock's duration: its job is taken again about then too). A
// call that finds a cap full waits, polling with a short backoff; it never
// fails for it. A plugin without caps costs no Redis command.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidInputError, sleep } from '../platform/index.js';
import { scriptsOn, type Keys } from '../redis/index.js';

/** What an admin set (stored with the plugin's record). */
export interface CallCaps {
  /** Most calls of the plugin running at once across the installation. */
  maxConcurrency?: number;
  /** Most calls started per `per` across the installation. */
  rate?: { calls: number; per: 'second' | 'minute' };
}

/** `plugin set`'s input: a number/`R/s`, or null to clear. */
export interface CapSettings {
  maxConcurrency?: number | null;
  rate?: string | null;
}

export const MAX_CONCURRENCY_CAP = 10_000;
export const MAX_RATE_CALLS = 100_000;
/** A call's lease on its slot when nobody said (the default BullMQ job lock). */
export const DEFAULT_CAP_LEASE_MS = 30_000;
const WINDOW_MS = { second: 1_000, minute: 60_000 } as const;
/** Polling while a cap is full: from this, doubling, up to the most. */
const FIRST_POLL_MS = 20;
const MOST_POLL_MS = 500;

/** `20/s`, `100/m` (also `/sec`, `/min`) → the stored rate. */
export function parseRate(text: string): NonNullable<CallCaps['rate']> {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|second|m|min|minute)\s*$/i.exec(text);
  const calls = match ? Number(match[1]) : NaN;
  if (!match || !Number.isInteger(calls) || calls < 1 || calls > MAX_RATE_CALLS)
    throw new InvalidInputError(
      `the rate must be calls per second or minute, like 20/s or 100/m (1 to ${MAX_RATE_CALLS}), not ${JSON.stringify(text)}`,
    );
  return { calls, per: match[2]!.toLowerCase().startsWith('s') ? 'second' : 'minute' };
}

/** How a stored rate is written back (`20/s`). */
export function rateText(rate: NonNullable<CallCaps['rate']>): string {
  return `${rate.calls}/${rate.per === 'second' ? 's' : 'm'}`;
}

/** The caps after an admin's change: a value sets, null clears, undefined keeps. */
export function applyCapSettings(current: CallCaps | undefined, settings: CapSettings): CallCaps {
  const next: CallCaps = { ...current };
  if (settings.maxConcurrency === null) delete next.maxConcurrency;
  else if (settings.maxConcurrency !== undefined) {
    const most = settings.maxConcurrency;
    if (!Number.isInteger(most) || most < 1 || most > MAX_CONCURRENCY_CAP)
      throw new InvalidInputError(
        `--max-concurrency must be a whole number from 1 to ${MAX_CONCURRENCY_CAP}, or none`,
      );
    next.maxConcurrency = most;
  }
  if (settings.rate === null) delete next.rate;
  else if (settings.rate !== undefined) next.rate = parseRate(settings.rate);
  return next;
}

export function hasCaps(caps: CallCaps | undefined): caps is CallCaps {
  return caps?.maxConcurrency !== undefined || caps?.rate !== undefined;
}

/** One admitted call's hold on its plugin's caps; released when the call ends. */
export interface CapHold {
  release(): Promise<void>;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Told once when the call starts waiting, with why (a person reads it). */
  onWaiting?: (reason: string) => void;
}

export class PluginCaps {
  /** How long a holder's slot outlives its last renewal (the job lock's duration in a worker). */
  leaseMs = DEFAULT_CAP_LEASE_MS;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /**
   * Waits until the call may start under `caps`, then holds a slot (renewed
   * every third of the lease) until release. Resolves undefined when the
   * signal aborted first.
   */
  async admit(pluginId: string, caps: CallCaps, options: WaitOptions = {}): Promise<CapHold | undefined> {
    const callId = `${process.pid.toString(36)}.${randomBytes(6).toString('hex')}`;
    const holders = this.keys.capHolders(pluginId);
    const leaseMs = this.leaseMs;
    const window = caps.rate ? WINDOW_MS[caps.rate.per] : 0;
    const scripts = scriptsOn(this.redis);
    let told = false;
    for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MOST_POLL_MS)) {
      if (options.signal?.aborted) return undefined;
      const [answer, retryMs] = await scripts.capAcquire(
        [holders, this.keys.capCalls(pluginId)],
        callId,
        caps.maxConcurrency ?? 0,
        leaseMs,
        caps.rate?.calls ?? 0,
        window,
      );
      if (answer === 'ok') break;
      if (!told) {
        told = true;
        options.onWaiting?.(waitReason(pluginId, caps, answer));
      }
      await sleep(Math.max(1, Math.min(poll, retryMs)), options.signal);
    }
    if (caps.maxConcurrency === undefined) return { release: async () => {} };
    const renewing = setInterval(
      () => void scripts.capRenew([holders], callId, leaseMs).catch(() => {}),
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    renewing.unref();
    return {
      release: async () => {
        clearInterval(renewing);
        await this.redis.zrem(holders, callId).catch(() => {});
      },
    };
  }
}

function waitReason(pluginId: string, caps: CallCaps, answer: 'concurrency' | 'rate'): string {
  if (answer === 'concurrency')
    return `waiting: plugin ${pluginId} already runs ${caps.maxConcurrency} call${caps.maxConcurrency === 1 ? '' : 's'} at once across the installation (its --max-concurrency)`;
  return `waiting: plugin ${pluginId} reached its rate of ${rateText(caps.rate!)} across the installation (its --rate)`;
}
