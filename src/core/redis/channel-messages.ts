// What travels on each pub/sub channel that keys.ts names, and why a running
// call was aborted: a named type and one codec each, so every publisher (a
// module, or a Lua script that is handed the encoded message as ARGV) and
// every listener agree on one form. Channels carry ids, never keys.
import { z } from 'zod';

/** A codec for one channel: `decode` answers undefined for a message of another form (it is ignored). */
export interface MessageCodec<T> {
  encode(value: T): string;
  decode(message: string): T | undefined;
}

const id = z.string().min(1);

/** A message that is one id (or one state): never empty. */
function textCodec(): MessageCodec<string> {
  return {
    encode: (value) => id.parse(value),
    decode: (message) => (id.safeParse(message).success ? message : undefined),
  };
}

/**
 * keys.operationCancelChannel: the id of a running operation whose cancel
 * was requested; the worker running it kills its call (operation-cancel.lua
 * publishes it).
 */
export const operationCancelMessage: MessageCodec<string> = textCodec();

/** keys.batchCancel: the id of a batch whose running inspection calls are to be killed. */
export const batchCancelMessage: MessageCodec<string> = textCodec();

/**
 * keys.operationEvents(id): the operation's new state, published by the
 * transition and cancel scripts each time one is written (followers re-read
 * the record when they hear it).
 */
export const operationStateMessage: MessageCodec<string> = textCodec();

/** keys.operationActivityChannel: an operation's call started or ended on some worker (operation priority). */
export interface OperationActivity {
  kind: 'started' | 'ended';
  operationId: string;
}
const ACTIVITY_KINDS: readonly OperationActivity['kind'][] = ['started', 'ended'];

export const operationActivityMessage: MessageCodec<OperationActivity> = {
  encode: ({ kind, operationId }) => `${kind}:${id.parse(operationId)}`,
  decode: (message) => {
    const separator = message.indexOf(':');
    const kind = message.slice(0, separator) as OperationActivity['kind'];
    const operationId = message.slice(separator + 1);
    if (separator < 0 || !ACTIVITY_KINDS.includes(kind) || operationId === '') return undefined;
    return { kind, operationId };
  },
};

/**
 * keys.batchEvents(id): outcomes were recorded, with the batch's counts after
 * them: `projectIds` all of them, `projectId` and `status` the last one.
 * batch-record.lua encodes it (cjson; it reads the counts in the same script),
 * so only the decoder is here.
 */
const batchProgressSchema = z.object({
  projectId: z.string(),
  status: z.enum(['succeeded', 'failed', 'cancelled']),
  // Messages from before outcomes were recorded together name one project only.
  projectIds: z.array(z.string()).optional(),
  total: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  // Messages from before cancelled outcomes were counted have none.
  cancelled: z.number().default(0),
  finished: z.boolean(),
});
export type BatchProgressMessage = z.infer<typeof batchProgressSchema>;

export const batchProgressMessage: Pick<MessageCodec<BatchProgressMessage>, 'decode'> = {
  decode: (message) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return undefined;
    }
    const checked = batchProgressSchema.safeParse(parsed);
    return checked.success ? checked.data : undefined;
  },
};

/**
 * Why a running call's signal was aborted. The worker shell aborts with
 * shutdown and lockLost (the job's lock is about to lapse unrenewed); the core
 * with cancelled (the operation's cancel was heard), lockLost (its project lock
 * was lost) and batchCancelled (`batch cancel`).
 */
export const ABORT_REASONS = {
  shutdown: 'shutdown',
  lockLost: 'lock-lost',
  cancelled: 'cancelled',
  batchCancelled: 'batch-cancelled',
} as const;
export type AbortReason = (typeof ABORT_REASONS)[keyof typeof ABORT_REASONS];
const REASONS: readonly unknown[] = Object.values(ABORT_REASONS);

/** The reason an aborted signal carries, when it is one of ABORT_REASONS. */
export function abortReasonOf(signal: AbortSignal | undefined): AbortReason | undefined {
  if (!signal?.aborted) return undefined;
  return REASONS.includes(signal.reason) ? (signal.reason as AbortReason) : undefined;
}
