// One pub/sub subscriber connection per runtime for the live followers (the
// api's event streams, `inspect --wait`, `run --wait`). A connection per
// follower let one viewer token opening thousands of event streams open as
// many Redis connections and exhaust `maxclients` for every process, workers
// included. The hub SUBSCRIBEs a channel for its first listener and
// UNSUBSCRIBEs it after its last; the connection is made for the first
// channel and closed when none is left, so a process that follows nothing
// holds no subscriber (docs/adr/0004-one-event-hub-per-process.md).
import type { Redis } from 'ioredis';
import { duplicateRedis } from './connections.js';

/** How often a live follower re-reads what it follows in case a message was lost. */
export const FALLBACK_READ_MS = 5_000;

export interface ChannelListener {
  /** A message published on the channel. */
  onMessage(message: string): void;
  /**
   * The subscriber came back after a drop and is subscribed again. Pub/sub
   * keeps nothing for the absent, so anything published meanwhile is lost:
   * re-read now instead of at the next safety re-read.
   */
  onResync(): void;
}

/** Ends one listener's subscription (the channel's last one UNSUBSCRIBEs); harmless when repeated. */
export type Unsubscribe = () => void;

interface Channel {
  listeners: Set<ChannelListener>;
  /** Settles when Redis acknowledged the SUBSCRIBE. */
  subscribed: Promise<void>;
}

/** The name the hub's connection carries in CLIENT LIST. */
export const EVENT_HUB_CONNECTION_NAME = 'switchyard-events';

export class EventHub {
  #connection: Redis | undefined;
  readonly #channels = new Map<string, Channel>();
  #closed = false;

  /** `redis`: the connection whose options the subscriber copies (it is not used itself). */
  constructor(private readonly redis: Redis) {}

  /**
   * Resolves once Redis has acknowledged the subscription, so a read made
   * after it misses no message published after that read. Rejects when the
   * SUBSCRIBE fails (Redis unreachable); nothing is left subscribed then.
   */
  async subscribe(channel: string, listener: ChannelListener): Promise<Unsubscribe> {
    if (this.#closed) throw new Error('the event hub is closed');
    const connection = this.#connect();
    let entry = this.#channels.get(channel);
    if (!entry) {
      const made: Channel = {
        listeners: new Set(),
        subscribed: connection.subscribe(channel).then(() => undefined),
      };
      // A failed SUBSCRIBE is forgotten, so the next listener tries again.
      made.subscribed.catch(() => {
        if (this.#channels.get(channel) === made) this.#forget(channel);
      });
      this.#channels.set(channel, made);
      entry = made;
    }
    const joined = entry;
    joined.listeners.add(listener);
    try {
      await joined.subscribed;
    } catch (error) {
      this.#leave(channel, joined, listener);
      throw error;
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#leave(channel, joined, listener);
    };
  }

  /** How many channels are subscribed now (for tests and metrics). */
  get channelCount(): number {
    return this.#channels.size;
  }

  /** Drops the connection; later subscribes are refused. Listeners left hear nothing more. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#channels.clear();
    this.#drop();
  }

  #connect(): Redis {
    if (this.#connection) return this.#connection;
    const connection = duplicateRedis(this.redis, { connectionName: EVENT_HUB_CONNECTION_NAME });
    let readyBefore = false;
    connection.on('message', (channel: string, message: string) => {
      if (connection !== this.#connection) return;
      for (const listener of [...(this.#channels.get(channel)?.listeners ?? [])])
        quietly(() => listener.onMessage(message));
    });
    connection.on('ready', () => {
      if (connection !== this.#connection) return;
      if (readyBefore) void this.#resync(connection);
      readyBefore = true;
    });
    this.#connection = connection;
    return connection;
  }

  /**
   * After a reconnect. ioredis re-subscribes by itself (autoResubscribe), but
   * it says so by no event: 'ready' is emitted once the SUBSCRIBE is written,
   * not acknowledged. Subscribing every channel again here (harmless for one
   * already subscribed) tells when they all are; only then may a re-read miss
   * nothing.
   */
  async #resync(connection: Redis): Promise<void> {
    const channels = [...this.#channels.keys()];
    if (channels.length === 0) return;
    try {
      await connection.subscribe(...channels);
    } catch {
      // Dropped again: the next 'ready' resyncs; meanwhile the safety re-reads cover it.
      return;
    }
    if (connection !== this.#connection) return;
    for (const channel of channels)
      for (const listener of [...(this.#channels.get(channel)?.listeners ?? [])])
        quietly(() => listener.onResync());
  }

  #leave(channel: string, entry: Channel, listener: ChannelListener): void {
    entry.listeners.delete(listener);
    if (entry.listeners.size > 0 || this.#channels.get(channel) !== entry) return;
    this.#forget(channel);
  }

  /** No listener left on the channel: UNSUBSCRIBE, or close the connection when it was the last channel. */
  #forget(channel: string): void {
    this.#channels.delete(channel);
    if (this.#channels.size === 0) this.#drop();
    else this.#connection?.unsubscribe(channel).catch(() => {});
  }

  #drop(): void {
    const connection = this.#connection;
    this.#connection = undefined;
    connection?.disconnect();
  }
}

function quietly(call: () => void): void {
  try {
    call();
  } catch {
    // One listener's failure is its own; the others still hear the channel.
  }
}
