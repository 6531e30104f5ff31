// /api/v1/webhooks (admin): add, list, remove, and the deliveries with their attempts.
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerWebhookRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { webhooks } = runtime;
  route(routes.listWebhooks, () => webhooks.list());
  route(routes.addWebhook, ({ body, actor }) => webhooks.add(withoutUndefined(body), actor));
  route(routes.removeWebhook, ({ params, actor }) => webhooks.remove(params.id, actor));
  route(routes.listDeliveries, () => webhooks.deliveries());
  route(routes.webhookDeliveries, ({ params }) => webhooks.deliveries(params.id));
}
