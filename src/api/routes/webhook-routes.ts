// /api/v1/webhooks (admin): add, list, remove, and the deliveries with their attempts.
import { routes } from '../../core/contract/index.js';
import { addWebhook, listWebhooks, removeWebhook, webhookDeliveries } from '../../core/work/notify/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerWebhookRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  route(routes.listWebhooks, () => listWebhooks(runtime.notifier));
  route(routes.addWebhook, ({ body, actor }) => addWebhook(runtime.notifier, withoutUndefined(body), actor));
  route(routes.removeWebhook, ({ params, actor }) => removeWebhook(runtime.notifier, params.id, actor));
  route(routes.listDeliveries, () => webhookDeliveries(runtime.notifier));
  route(routes.webhookDeliveries, ({ params }) => webhookDeliveries(runtime.notifier, params.id));
}
