// What the operations' pub/sub channels carry (keys.ts names them): one codec
// each, shared by the Lua scripts' callers, the worker and every follower.
import { z } from 'zod';
import { idMessageCodec, type MessageCodec } from '../../redis/index.js';

/**
 * keys.operationCancelChannel: the id of a running operation whose cancel
 * was requested; the worker running it kills its call (operation-cancel.lua
 * publishes it).
 */
export const operationCancelMessage: MessageCodec<string> = idMessageCodec();

/**
 * keys.operationEvents(id): the operation's new state, published by the
 * transition and cancel scripts each time one is written (followers re-read
 * the record when they hear it).
 */
export const operationStateMessage: MessageCodec<string> = idMessageCodec();

/** keys.operationActivityChannel: an operation's call started or ended on some worker (operation priority). */
export interface OperationActivity {
  kind: 'started' | 'ended';
  operationId: string;
}
const ACTIVITY_KINDS: readonly OperationActivity['kind'][] = ['started', 'ended'];
const id = z.string().min(1);

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
