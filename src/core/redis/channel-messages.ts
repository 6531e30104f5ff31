// The plumbing of pub/sub messages: what a channel's codec is, and the codec
// of a message that is one id. Each channel keys.ts names has a named type and
// one codec, kept by the room that owns the channel (work/batches'
// batch-messages.ts, work/operations' operation-messages.ts), so every
// publisher (a module, or a Lua script that is handed the encoded message as
// ARGV) and every listener agree on one form. Channels carry ids, never keys.
import { z } from 'zod';

/** A codec for one channel: `decode` answers undefined for a message of another form (it is ignored). */
export interface MessageCodec<T> {
  encode(value: T): string;
  decode(message: string): T | undefined;
}

const id = z.string().min(1);

/** A message that is one id (or one state): never empty. */
export function idMessageCodec(): MessageCodec<string> {
  return {
    encode: (value) => id.parse(value),
    decode: (message) => (id.safeParse(message).success ? message : undefined),
  };
}
