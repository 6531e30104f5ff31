// Cancellation and operation activity from any process arrive over pub/sub:
// the worker holding an operation or a batch's calls aborts them, and every
// worker hears when operations run (operation-priority.ts).
import type { Redis } from 'ioredis';
import { duplicateRedis } from '../core/redis/index.js';
import { batchCancelMessage, type InspectionRunner } from '../core/work/batches/index.js';
import {
  operationActivityMessage,
  operationCancelMessage,
  type OperationRunner,
} from '../core/work/operations/index.js';
import type { Runtime } from '../core/runtime/index.js';
import type { OperationPriority } from './operation-priority.js';

export interface Listeners {
  priority: OperationPriority;
  inspections: InspectionRunner;
  operations: OperationRunner;
}

/** Subscribed once this resolves; disconnect the connection it returns to stop. */
export async function listenForCancels(runtime: Runtime, to: Listeners): Promise<Redis> {
  const { keys } = runtime;
  const subscriber: Redis = duplicateRedis(runtime.redis);
  await subscriber.subscribe(keys.operationCancelChannel, keys.operationActivityChannel, keys.batchCancel);
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === keys.operationActivityChannel) {
      const activity = operationActivityMessage.decode(message);
      return activity && to.priority.hear(activity);
    }
    if (channel === keys.batchCancel) {
      const batchId = batchCancelMessage.decode(message);
      return void (batchId && to.inspections.cancelBatch(batchId));
    }
    const operationId = operationCancelMessage.decode(message);
    if (operationId) to.operations.cancel(operationId);
  });
  return subscriber;
}
