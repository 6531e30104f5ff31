// /api/v1/webhooks (admin): add, edit, rotate the secret, ping, remove; the
// deliveries with their attempts and the receiver's answers, one delivery
// with its body, and a redelivery.
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import { ROTATION_WINDOW_MS } from '../../core/work/notify/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerWebhookRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { webhooks } = runtime;
  route(routes.listWebhooks, () => webhooks.list());
  route(routes.addWebhook, ({ body, actor }) => webhooks.add(withoutUndefined(body), actor));
  route(routes.listDeliveries, () => webhooks.deliveries());
  route(routes.showDelivery, ({ params }) => webhooks.delivery(params.id));
  route(routes.redeliverDelivery, ({ params, actor }) => webhooks.redeliver(params.id, actor));
  route(routes.editWebhook, ({ params, body, actor }) =>
    webhooks.edit(params.id, withoutUndefined(body), actor),
  );
  route(routes.rotateWebhookSecret, ({ params, body, actor }) =>
    webhooks.rotateSecret(params.id, body.secret, body.previousValidForMs ?? ROTATION_WINDOW_MS, actor),
  );
  route(routes.pingWebhook, ({ params, actor }) => webhooks.ping(params.id, actor));
  route(routes.removeWebhook, ({ params, actor }) => webhooks.remove(params.id, actor));
  route(routes.webhookDeliveries, ({ params }) => webhooks.deliveries(params.id));
}
