// Producing an event: the rooms where a fact becomes known (a batch ended, an
// operation ended, a schedule run failed) publish it here; each webhook that
// wants it gets one delivery record and one job on the notify queue. An event
// has a key (`batch.finished:<batch id>`) that fixes its delivery ids: the
// first process to record a delivery (SET NX) produces it, so two processes
// that both see a batch end send it once, and publishing again after a crash
// between the record and its job adds the job then.
// The body passes through the same redaction as every API body. A ping (a
// test event for one webhook) and a redelivery (a delivery's body sent again,
// under a new delivery id) take the same path: a record, then a job.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { redactDeep } from '../../safety/index.js';
import type { Keys } from '../../redis/index.js';
import { NOTIFY_ATTEMPTS, NOTIFY_BACKOFF_MS } from './notify-job.js';
import {
  WebhookStore,
  type DeliveryEvent,
  type DeliveryRecord,
  type WebhookEvent,
  type WebhookView,
} from './webhook-store.js';

export interface NoticeOptions {
  /** Unique per event (e.g. the batch id): the event is produced once per key. */
  key: string;
  /** The plugin concerned: webhooks limited to another plugin do not get it. */
  pluginId?: string;
}

/** What the other rooms hold to publish: the small interface they depend on. */
export interface Notices {
  /** True when some webhook takes this event (of this plugin): the publisher may skip costly work when not. */
  wants(event: WebhookEvent, pluginId?: string): Promise<boolean>;
  publish(event: WebhookEvent, data: Record<string, unknown>, options: NoticeOptions): Promise<number>;
}

export class Notifier implements Notices {
  readonly store: WebhookStore;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
    private readonly queue: Queue,
  ) {
    this.store = new WebhookStore(redis, keys);
  }

  async wants(event: WebhookEvent, pluginId?: string): Promise<boolean> {
    return (await this.#hooksFor(event, pluginId)).length > 0;
  }

  async #hooksFor(event: WebhookEvent, pluginId: string | undefined) {
    return (await this.store.list()).filter(
      (hook) =>
        hook.active &&
        hook.events.includes(event) &&
        (hook.pluginId === undefined || pluginId === undefined || hook.pluginId === pluginId),
    );
  }

  /** Enqueues one delivery per matching webhook; how many new (0 when another process produced it). */
  async publish(event: WebhookEvent, data: Record<string, unknown>, options: NoticeOptions): Promise<number> {
    const hooks = await this.#hooksFor(event, options.pluginId);
    if (hooks.length === 0) return 0;
    const eventKey = `${event}:${options.key}`;
    const at = new Date().toISOString();
    const digest = createHash('sha256').update(eventKey).digest('hex').slice(0, 16);
    let enqueued = 0;
    for (const hook of hooks) {
      // One delivery per event and webhook: its id is fixed by both, its record taken with SET NX.
      const deliveryId = `${digest}-${hook.id}`;
      const created = await this.#record(deliveryId, hook, event, at, data);
      // Published again (a process died between the record and the job): a pending delivery's
      // job is added again — a no-op while BullMQ holds a job of that id; one that was delivered is not.
      if (!created && (await this.store.delivery(deliveryId))?.state !== 'pending') continue;
      await this.#enqueue(event, deliveryId);
      if (created) enqueued += 1;
    }
    return enqueued;
  }

  /** A `ping` for one webhook (active or not): the delivery, queued. */
  async ping(hook: WebhookView): Promise<DeliveryRecord> {
    const deliveryId = `${freshId()}-${hook.id}`;
    const { id, url, events, active } = hook;
    await this.#record(deliveryId, hook, 'ping', new Date().toISOString(), {
      webhook: { id, url, events, active },
    });
    await this.#enqueue('ping', deliveryId);
    return (await this.store.delivery(deliveryId))!;
  }

  /** `original`'s event and data sent again to its webhook (its URL and secrets now), under a new id. */
  async redeliver(original: DeliveryRecord, hook: WebhookView): Promise<DeliveryRecord> {
    const deliveryId = `${freshId()}-${hook.id}`;
    const sent = JSON.parse(original.body) as { at: string; data: Record<string, unknown> };
    await this.#record(deliveryId, hook, original.event, sent.at, sent.data, original.deliveryId);
    await this.#enqueue(original.event, deliveryId);
    return (await this.store.delivery(deliveryId))!;
  }

  #record(
    deliveryId: string,
    hook: WebhookView,
    event: DeliveryEvent,
    at: string,
    data: Record<string, unknown>,
    redeliveryOf?: string,
  ): Promise<boolean> {
    const extra = redeliveryOf ? { redeliveryOf } : {};
    const body = JSON.stringify(redactDeep({ event, deliveryId, webhookId: hook.id, ...extra, at, data }));
    return this.store.createDelivery({
      deliveryId,
      webhookId: hook.id,
      event,
      url: hook.url,
      // A redelivery is made now; its body keeps the event's time.
      createdAt: redeliveryOf ? new Date().toISOString() : at,
      state: 'pending',
      attempts: [],
      body,
      ...extra,
    });
  }

  #enqueue(event: DeliveryEvent, deliveryId: string) {
    return this.queue.add(
      event,
      { deliveryId },
      {
        jobId: deliveryId,
        attempts: NOTIFY_ATTEMPTS,
        backoff: { type: 'exponential', delay: NOTIFY_BACKOFF_MS },
      },
    );
  }
}

/** A delivery id's random part, as long as an event digest. */
function freshId(): string {
  return randomBytes(8).toString('hex');
}
