// What the batches' pub/sub channels carry (keys.ts names them): one codec each.
import { z } from 'zod';
import { idMessageCodec, type MessageCodec } from '../../redis/index.js';

/** keys.batchCancel: the id of a batch whose running inspection calls are to be killed. */
export const batchCancelMessage: MessageCodec<string> = idMessageCodec();

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
