// What each call slot of a worker process runs now, for `switchyard queue`:
// the worker keeps its board in memory and writes all of it as one Redis
// string with an expiry (keys.workerSlots), at most every FLUSH_MS and on a
// heartbeat — one command however many calls started and ended meanwhile, so
// a busy worker adds well under one command per call. A worker that died
// leaves a board that expires; readers list the workers that report their
// confinement (confinement-report.ts) and read their boards in one MGET.
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Keys } from '../redis/index.js';
import { workerConfinement } from './confinement-report.js';

const FLUSH_MS = 500;
/** Short enough that a worker killed with -9 shows as silent well before its 30 s job locks lapse. */
const HEARTBEAT_MS = 5_000;
const EXPIRE_MS = 3 * HEARTBEAT_MS;
/** A board not rewritten for this long: its worker stopped (two beats missed, with room for a slow loop). */
const SILENT_AFTER_MS = 2 * HEARTBEAT_MS + 2_000;

export type SlotActivity = 'idle' | 'waiting' | 'running';

/** One slot as `switchyard queue` shows it (docs/CLI.md). */
export interface SlotView {
  slot: number;
  state: SlotActivity;
  pluginId?: string;
  /** `inspect`, `operate` or `health`. */
  kind?: string;
  projectId?: string;
  batchId?: string;
  operationId?: string;
  /** When the current call (or the idle spell) began. */
  since: string;
  /** Why a waiting call waits (its plugin's caps). */
  reason?: string;
  /** When this slot last took a call. */
  lastTookAt?: string;
}

export interface WorkerBoard {
  worker: string;
  host: string;
  slots: SlotView[];
  at: string;
}

export interface SlotCallInput {
  pluginId: string;
  method: string;
  projectId?: string | undefined;
  batchId?: string | undefined;
  operationId?: string | undefined;
}

/** One call's place on the board. */
export interface SlotCall {
  waiting(reason: string): void;
  running(): void;
  end(): void;
}

const KINDS: Record<string, string> = {
  'project.inspect': 'inspect',
  'project.operate': 'operate',
  'plugin.health': 'health',
};

export class WorkerSlots {
  readonly #slots: SlotView[] = [];
  readonly #heartbeat: NodeJS.Timeout;
  #flushTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    readonly worker: string,
  ) {
    this.#heartbeat = setInterval(() => void this.flush(), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** A call takes the lowest free slot; running unless it waits (`waiting`). */
  start(call: SlotCallInput): SlotCall {
    let index = this.#slots.findIndex((slot) => slot.state === 'idle');
    if (index === -1) index = this.#slots.length;
    const now = new Date().toISOString();
    const view: SlotView = {
      slot: index,
      state: 'running',
      pluginId: call.pluginId,
      kind: KINDS[call.method] ?? call.method,
      since: now,
      lastTookAt: now,
      ...(call.projectId ? { projectId: call.projectId } : {}),
      ...(call.batchId ? { batchId: call.batchId } : {}),
      ...(call.operationId ? { operationId: call.operationId } : {}),
    };
    this.#slots[index] = view;
    this.#changed();
    return {
      waiting: (reason) => this.#set(index, view, { state: 'waiting', reason }),
      running: () => {
        const { reason: _reason, ...rest } = view;
        this.#set(index, rest, { state: 'running', since: new Date().toISOString() });
      },
      end: () => {
        const current = this.#slots[index];
        this.#slots[index] = {
          slot: index,
          state: 'idle',
          since: new Date().toISOString(),
          ...(current?.lastTookAt ? { lastTookAt: current.lastTookAt } : {}),
        };
        this.#changed();
      },
    };
  }

  #set(index: number, base: SlotView, change: Partial<SlotView>): void {
    this.#slots[index] = { ...base, ...change };
    this.#changed();
  }

  #changed(): void {
    this.#flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    this.#flushTimer.unref();
  }

  /** Writes the board now (one SET with its expiry). */
  async flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#closed) return;
    const board: WorkerBoard = {
      worker: this.worker,
      host: hostname(),
      slots: this.#slots,
      at: new Date().toISOString(),
    };
    await this.redis
      .set(this.keys.workerSlots(this.worker), JSON.stringify(board), 'PX', EXPIRE_MS)
      .catch(() => {});
  }

  /** The worker stops: its board goes with it. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#flushTimer);
    await this.redis.del(this.keys.workerSlots(this.worker)).catch(() => {});
  }
}

/**
 * How long ago a worker last wrote its board, by Redis's clock (the board's
 * remaining expiry, so no clock skew between hosts): undefined while it beats,
 * the milliseconds since its last beat once it stopped (at least EXPIRE_MS
 * when the board is gone).
 */
export async function workerSilentForMs(
  redis: Redis,
  keys: Keys,
  worker: string,
  /** When the worker was last known alive otherwise (it started a call): never silent for longer. */
  aliveAtMs: number,
): Promise<number | undefined> {
  const left = await redis.pttl(keys.workerSlots(worker));
  const since = Math.min(left < 0 ? EXPIRE_MS : EXPIRE_MS - left, Date.now() - aliveAtMs);
  return since > SILENT_AFTER_MS ? since : undefined;
}

/** Every live worker's board (workers that report their confinement), by worker name. */
export async function readWorkerBoards(redis: Redis, keys: Keys): Promise<WorkerBoard[]> {
  const workers = (await workerConfinement(redis, keys)).map((report) => report.worker);
  if (workers.length === 0) return [];
  const raw = await redis.mget(...workers.map((worker) => keys.workerSlots(worker)));
  return workers.map((worker, index) => {
    const text = raw[index];
    if (text) {
      try {
        return JSON.parse(text) as WorkerBoard;
      } catch {
        // An unreadable board shows as an empty one.
      }
    }
    return { worker, host: worker.split(':')[1] ?? '', slots: [], at: '' };
  });
}
