// Operations before batch inspections, across every worker process: while an
// operation is running anywhere, workers start no new inspection call.
// Operations already have their own queue, so they never wait behind queued
// inspections; what slows them under a batch is CPU — their plugin competes
// with the batch's spawns (BENCHMARKS.md, fairness). Calls already running
// finish; only new ones wait.
//
// Bounded, so a batch is never starved: one continuous hold — however many
// operations overlap in it — lasts at most `holdMs` and is followed by at
// least `holdMs` in which announcements are ignored; operations that follow
// one another each hold on their own, and every gap between them lets each
// free worker slot start an inspection. Announcements travel over Redis
// pub/sub (keys.operationActivityChannel, operation-messages.ts
// operationActivityMessage); a lost "ended" (a worker died) costs at most `holdMs`.
// Why: docs/adr/0005-operations-before-inspections.md.
import type { OperationActivity } from '../core/work/operations/index.js';

export class OperationPriority {
  readonly #holdMs: number;
  readonly #running = new Set<string>();
  #holdEnds: NodeJS.Timeout | undefined;
  #ignoreUntil = 0;
  #closed = false;
  #waiters = new Set<() => void>();

  constructor(holdMs: number) {
    this.#holdMs = holdMs;
  }

  /** Applies one message of the channel. */
  hear({ kind, operationId }: OperationActivity): void {
    if (this.#closed || this.#holdMs <= 0) return;
    if (kind === 'started') {
      if (Date.now() < this.#ignoreUntil) return;
      if (this.#running.size === 0) {
        this.#holdEnds = setTimeout(() => this.#release(true), this.#holdMs);
        this.#holdEnds.unref();
      }
      this.#running.add(operationId);
    } else if (kind === 'ended' && this.#running.delete(operationId) && this.#running.size === 0) {
      this.#release(false);
    }
  }

  /** Whether new inspection calls wait now. */
  get holding(): boolean {
    return this.#running.size > 0;
  }

  /** Resolves once inspections may start (at once when nothing holds them), or when `signal` aborts. */
  async clear(signal?: AbortSignal): Promise<void> {
    while (this.holding && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.#waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Lets every waiter go and ignores what is heard from now on (shutdown). */
  close(): void {
    this.#closed = true;
    this.#release(false);
  }

  /** Ends the hold; after one that ran its full length, inspections get at least as long before the next. */
  #release(capped: boolean): void {
    clearTimeout(this.#holdEnds);
    this.#running.clear();
    if (capped) this.#ignoreUntil = Date.now() + this.#holdMs;
    for (const done of [...this.#waiters]) done();
  }
}
