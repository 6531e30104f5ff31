// Webhook administration for every front (CLI, api): add, list, remove and
// the deliveries; add and remove are audited with their actor (never the
// secret). The role (admin) is checked by the fronts.
import { appendAudit } from '../../access/index.js';
import type { Notifier } from './notifier.js';
import type { DeliveryView, WebhookInput, WebhookView } from './webhook-store.js';

export async function addWebhook(
  notifier: Notifier,
  input: WebhookInput,
  actor: string,
): Promise<WebhookView> {
  const view = await notifier.store.add(input, actor);
  await appendAudit(notifier.redis, notifier.keys, {
    actor,
    action: 'webhook.add',
    target: view.id,
    detail: { url: view.url, events: view.events, ...(view.pluginId ? { pluginId: view.pluginId } : {}) },
  });
  return view;
}

export function listWebhooks(notifier: Notifier): Promise<WebhookView[]> {
  return notifier.store.list();
}

export async function removeWebhook(
  notifier: Notifier,
  id: string,
  actor: string,
): Promise<{ id: string; removed: true }> {
  const view = await notifier.store.remove(id);
  await appendAudit(notifier.redis, notifier.keys, {
    actor,
    action: 'webhook.remove',
    target: view.id,
    detail: { url: view.url },
  });
  return { id: view.id, removed: true };
}

export function webhookDeliveries(
  notifier: Notifier,
  webhookId?: string,
  limit?: number,
): Promise<DeliveryView[]> {
  return notifier.store.deliveries(webhookId, limit);
}
