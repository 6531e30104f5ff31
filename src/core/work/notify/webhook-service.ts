// Webhook administration for every front (CLI, api): add, edit, rotate the
// secret, remove, ping, and the deliveries (list, show, redeliver); every
// change is audited with its actor (never a secret). The role (admin) is checked by the fronts. The worker delivers
// through it too.
import { appendAudit } from '../../access/index.js';
import { ConflictError } from '../../platform/index.js';
import type { NoticeOptions, Notices, Notifier } from './notifier.js';
import { deliverWebhook, type DeliveryAttemptInfo } from './webhook-delivery.js';
import type {
  DeliveryRecord,
  DeliveryView,
  WebhookChanges,
  WebhookEvent,
  WebhookInput,
  WebhookView,
} from './webhook-store.js';

export class WebhookService implements Notices {
  constructor(private readonly notifier: Notifier) {}

  wants(event: WebhookEvent, pluginId?: string): Promise<boolean> {
    return this.notifier.wants(event, pluginId);
  }

  /** Produces an event (notifier.ts): one delivery per webhook that wants it. */
  publish(event: WebhookEvent, data: Record<string, unknown>, options: NoticeOptions): Promise<number> {
    return this.notifier.publish(event, data, options);
  }

  async add(input: WebhookInput, actor: string): Promise<WebhookView> {
    const { notifier } = this;
    const view = await notifier.store.add(input, actor);
    await appendAudit(notifier.redis, notifier.keys, {
      actor,
      action: 'webhook.add',
      target: view.id,
      detail: { url: view.url, events: view.events, ...(view.pluginId ? { pluginId: view.pluginId } : {}) },
    });
    return view;
  }

  async edit(id: string, changes: WebhookChanges, actor: string): Promise<WebhookView> {
    const view = await this.notifier.store.edit(id, changes);
    await this.#audit(actor, 'webhook.edit', id, {
      url: view.url,
      events: view.events,
      active: view.active,
    });
    return view;
  }

  /** A new secret; the one it replaces still signs (a second header) for `windowMs`. */
  async rotateSecret(id: string, secret: string, windowMs: number, actor: string): Promise<WebhookView> {
    const view = await this.notifier.store.rotateSecret(id, secret, windowMs);
    await this.#audit(actor, 'webhook.rotate-secret', id, {
      url: view.url,
      ...(view.previousSecretUntil ? { previousSecretUntil: view.previousSecretUntil } : {}),
    });
    return view;
  }

  /** A `ping` delivery to one webhook, queued: the worker sends it as it sends events. */
  async ping(id: string, actor: string): Promise<DeliveryRecord> {
    const hook = await this.notifier.store.get(id);
    const record = await this.notifier.ping(hook);
    await this.#audit(actor, 'webhook.ping', id, { url: hook.url, deliveryId: record.deliveryId });
    return record;
  }

  /** A finished delivery's body sent again, under a new delivery id, to its webhook as it is now. */
  async redeliver(deliveryId: string, actor: string): Promise<DeliveryRecord> {
    const { store } = this.notifier;
    const original = await store.deliveryOrFail(deliveryId);
    if (original.state === 'pending' || original.state === 'retrying')
      throw new ConflictError(
        `delivery ${deliveryId} is still being sent (${original.state}); redeliver it once it is delivered or failed`,
      );
    const hook = await store.get(original.webhookId);
    const record = await this.notifier.redeliver(original, hook);
    await this.#audit(actor, 'webhook.redeliver', hook.id, {
      url: hook.url,
      deliveryId: record.deliveryId,
      redeliveryOf: deliveryId,
    });
    return record;
  }

  #audit(actor: string, action: string, target: string, detail: Record<string, unknown>) {
    const { notifier } = this;
    return appendAudit(notifier.redis, notifier.keys, { actor, action, target, detail });
  }

  list(): Promise<WebhookView[]> {
    return this.notifier.store.list();
  }

  async remove(id: string, actor: string): Promise<{ id: string; removed: true }> {
    const { notifier } = this;
    const view = await notifier.store.remove(id);
    await appendAudit(notifier.redis, notifier.keys, {
      actor,
      action: 'webhook.remove',
      target: view.id,
      detail: { url: view.url },
    });
    return { id: view.id, removed: true };
  }

  /** Newest first: every webhook's, or one's. */
  deliveries(webhookId?: string, limit?: number): Promise<DeliveryView[]> {
    return this.notifier.store.deliveries(webhookId, limit);
  }

  /** One delivery's record, with its body and attempts; unknown: a NotFoundError. */
  delivery(deliveryId: string): Promise<DeliveryRecord> {
    return this.notifier.store.deliveryOrFail(deliveryId);
  }

  /** One attempt of a delivery (the notify job): resolves on a 2xx, throws so the queue retries otherwise. */
  deliver(deliveryId: string, attempt: DeliveryAttemptInfo): Promise<{ state: string; statusCode?: number }> {
    return deliverWebhook(this.notifier.store, deliveryId, attempt);
  }
}
