// The redis room's door: other rooms and the shells import only from here.
export { markCallStateChanged, readCallState } from './call-state.js';
export { idMessageCodec } from './channel-messages.js';
export type { MessageCodec } from './channel-messages.js';
export {
  closeRedis,
  connectRedis,
  createRedis,
  duplicateRedis,
  isRedisUnavailable,
  RedisUnreachableError,
} from './connections.js';
export { EventHub, FALLBACK_READ_MS } from './event-hub.js';
export { keysFor } from './keys.js';
export type { Keys } from './keys.js';
export { decodeCursor, encodeCursor, MAX_PAGE_LIMIT, pageLimit, sortedSetPage, streamPage } from './pages.js';
export type { Page, PageRequest } from './pages.js';
export { createQueues, DEFAULT_RETENTION, QUEUE_NAMES, retentionFromEnv } from './queues.js';
export type { Queues, RetentionConfig } from './queues.js';
export { RedisDirBusyError, startRedisServer, stopStaleRedisServer } from './redis-server.js';
export type { AppendFsync, RedisServer } from './redis-server.js';
export { ReplicaAcknowledger, ReplicaAckTimeoutError } from './replica-ack.js';
export { scriptsOn } from './scripts.js';
export type { CancelOutcome, DispatchOutcome, Scripts, TransitionOutcome } from './scripts.js';
export { WatchedKey } from './watched-key.js';
export type { Transaction } from './watched-key.js';
export { latestOffset, needsResolving, nthNewest, resolveIdRef } from './id-refs.js';
