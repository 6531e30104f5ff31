// Operations before batch inspections, across every worker process: while an
// operation is running anywhere, workers start no new inspection call, for at
// most `holdMs` per operation. Operations already have their own queue, so
// they never wait behind queued inspections; what slows them under a batch is
// CPU — their plugin competes with the batch's spawns (BENCHMARKS.md,
// fairness). Calls already running finish; only new ones wait.
//
// Announcements travel over Redis pub/sub. A lost "ended" (a worker died)
// costs at most `holdMs`, so a batch can never be starved by one: the hold
// expires on its own, measured from when this process heard of it.

const STARTED = 'started';
const ENDED = 'ended';

export function operationPriorityChannel(prefix: string): string {
  return `${prefix}:operation-activity`;
}

export function startedMessage(operationId: string): string {
  return `${STARTED}:${operationId}`;
}

export function endedMessage(operationId: string): string {
  return `${ENDED}:${operationId}`;
}

export class OperationPriority {
  readonly #holdMs: number;
  readonly #holding = new Map<string, NodeJS.Timeout>();
  #waiters: (() => void)[] = [];

  constructor(holdMs: number) {
    this.#holdMs = holdMs;
  }

  /** Applies one message of the channel; anything else is ignored. */
  hear(message: string): void {
    if (this.#holdMs <= 0) return;
    const separator = message.indexOf(':');
    const kind = message.slice(0, separator);
    const operationId = message.slice(separator + 1);
    if (kind === STARTED && !this.#holding.has(operationId)) {
      const expiry = setTimeout(() => this.#release(operationId), this.#holdMs);
      expiry.unref();
      this.#holding.set(operationId, expiry);
    } else if (kind === ENDED) {
      this.#release(operationId);
    }
  }

  get holding(): number {
    return this.#holding.size;
  }

  /** Resolves once no operation holds inspections (at once when none does), or when `signal` aborts. */
  async clear(signal?: AbortSignal): Promise<void> {
    while (this.#holding.size > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.#waiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Forgets every hold and lets every waiter go (shutdown). */
  close(): void {
    for (const expiry of this.#holding.values()) clearTimeout(expiry);
    this.#holding.clear();
    this.#wake();
  }

  #release(operationId: string): void {
    const expiry = this.#holding.get(operationId);
    if (expiry === undefined) return;
    clearTimeout(expiry);
    this.#holding.delete(operationId);
    if (this.#holding.size === 0) this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
