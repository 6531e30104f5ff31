// `switchyard queue` (CLI.md, GET /queue, the web UI's Queue page): per
// requester and per batch or operation what waits, what runs and its share of
// the running calls; per worker and slot what it runs now and when it last
// took work. A batch's waiting count comes from its record (projects without
// an outcome less those running), never from the queue's internals, so it
// stays right however its work is queued; what runs comes from the workers'
// slot boards (worker-slots.ts).
import type { Redis } from 'ioredis';
import { readWorkerBoards, type SlotView } from '../../plugins/index.js';
import type { Keys } from '../../redis/index.js';
import type { BatchStore } from '../batches/index.js';
import type { OperationStore } from '../operations/index.js';

/** At most this many running batches and this many queued or running operations are read. */
const READ_AT_MOST = 500;

export interface QueueWork {
  kind: 'batch' | 'operation';
  /** The batch or operation id. */
  id: string;
  pluginId: string;
  requester: string;
  /** Calls not started yet (a batch: projects without an outcome, less those running). */
  waiting: number;
  /** Calls running on some worker now. */
  running: number;
  /** Of those on a worker, the calls held back by the plugin's caps (not counted as running). */
  waitingForCaps: number;
  /** Its running calls over every running call (0 to 1). */
  share: number;
  /** Why its calls wait for the caps, when they do. */
  reason?: string;
  /** When it was requested. */
  since: string;
}

export interface QueueRequester {
  requester: string;
  waiting: number;
  running: number;
  share: number;
  work: QueueWork[];
}

export interface QueueWorker {
  worker: string;
  host: string;
  slots: SlotView[];
  /** When any of its slots last took a call. */
  lastTookAt?: string;
}

export interface QueueView {
  at: string;
  /** Calls running on every worker now. */
  running: number;
  requesters: QueueRequester[];
  workers: QueueWorker[];
}

export interface QueueSources {
  redis: Redis;
  keys: Keys;
  batches: BatchStore;
  operations: OperationStore;
}

/** `switchyard queue` for every front: what waits and runs now, read afresh at each call. */
export class QueueService {
  constructor(private readonly sources: QueueSources) {}

  view(): Promise<QueueView> {
    return readQueue(this.sources);
  }
}

export async function readQueue({ redis, keys, batches, operations }: QueueSources): Promise<QueueView> {
  const [boards, running, queued, started] = await Promise.all([
    readWorkerBoards(redis, keys),
    batches.list({ state: 'running', limit: READ_AT_MOST }),
    operations.list({ state: 'queued', limit: READ_AT_MOST }),
    operations.list({ state: 'running', limit: READ_AT_MOST }),
  ]);
  const busy = boards.flatMap((board) => board.slots.filter((slot) => slot.state !== 'idle'));
  const runningCalls = busy.filter((slot) => slot.state === 'running').length;
  const onSlots = (match: (slot: SlotView) => boolean) => {
    const slots = busy.filter(match);
    const reason = slots.find((slot) => slot.reason)?.reason;
    return {
      running: slots.filter((slot) => slot.state === 'running').length,
      waitingForCaps: slots.filter((slot) => slot.state === 'waiting').length,
      ...(reason ? { reason } : {}),
    };
  };
  const shareOf = (count: number) => (runningCalls === 0 ? 0 : count / runningCalls);
  const work: QueueWork[] = [];
  for (const batch of running.items) {
    const slots = onSlots((slot) => slot.batchId === batch.batchId);
    work.push({
      kind: 'batch',
      id: batch.batchId,
      pluginId: batch.pluginId,
      requester: batch.createdBy,
      waiting: Math.max(0, batch.pending - slots.running),
      ...slots,
      share: shareOf(slots.running),
      since: batch.createdAt,
    });
  }
  for (const operation of [...queued.items, ...started.items]) {
    const slots = onSlots((slot) => slot.operationId === operation.id);
    const isRunning = operation.state === 'running';
    work.push({
      kind: 'operation',
      id: operation.id,
      pluginId: operation.pluginId,
      requester: operation.requestedBy,
      waiting: isRunning ? 0 : 1,
      running: isRunning && !operation.waiting ? 1 : 0,
      waitingForCaps: operation.waiting ? 1 : slots.waitingForCaps,
      share: shareOf(isRunning && !operation.waiting ? 1 : 0),
      ...(operation.waiting ? { reason: operation.waiting } : slots.reason ? { reason: slots.reason } : {}),
      since: operation.requestedAt,
    });
  }
  const byRequester = new Map<string, QueueWork[]>();
  for (const item of work.sort((a, b) => a.since.localeCompare(b.since)))
    byRequester.set(item.requester, [...(byRequester.get(item.requester) ?? []), item]);
  const requesters = [...byRequester.entries()]
    .map(([requester, items]) => {
      const runningOf = items.reduce((sum, item) => sum + item.running, 0);
      return {
        requester,
        waiting: items.reduce((sum, item) => sum + item.waiting, 0),
        running: runningOf,
        share: shareOf(runningOf),
        work: items,
      };
    })
    .sort((a, b) => b.running - a.running || b.waiting - a.waiting || a.requester.localeCompare(b.requester));
  return {
    at: new Date().toISOString(),
    running: runningCalls,
    requesters,
    workers: boards.map((board) => {
      const last = board.slots
        .map((slot) => slot.lastTookAt)
        .filter((at): at is string => at !== undefined)
        .sort()
        .at(-1);
      return {
        worker: board.worker,
        host: board.host,
        slots: board.slots,
        ...(last ? { lastTookAt: last } : {}),
      };
    }),
  };
}
