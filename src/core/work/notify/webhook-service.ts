// Webhook administration for every front (CLI, api): add, list, remove and
// the deliveries; add and remove are audited with their actor (never the
// secret). The role (admin) is checked by the fronts. The worker delivers
// through it too.
import { appendAudit } from '../../access/index.js';
import type { NoticeOptions, Notices, Notifier } from './notifier.js';
import { deliverWebhook, type DeliveryAttemptInfo } from './webhook-delivery.js';
import type {
  DeliveryRecord,
  DeliveryView,
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

  /** One delivery's record, with its body and attempts. */
  delivery(deliveryId: string): Promise<DeliveryRecord | undefined> {
    return this.notifier.store.delivery(deliveryId);
  }

  /** One attempt of a delivery (the notify job): resolves on a 2xx, throws so the queue retries otherwise. */
  deliver(deliveryId: string, attempt: DeliveryAttemptInfo): Promise<{ state: string; statusCode?: number }> {
    return deliverWebhook(this.notifier.store, deliveryId, attempt);
  }
}
