// /api/v1/plugins: review, trust, grants, health, call policy and logs.
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS } from '@switchyard/plugin-sdk/protocol';
import { routes } from '../../core/contract/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';

export function registerPluginRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(routes.listPlugins, () => core.plugins.list());
  route(routes.showPlugin, async ({ params }) => ({
    ...(await core.plugins.show(params.id)),
    osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT,
    scopeDescriptions: SCOPE_DESCRIPTIONS,
  }));
  route(routes.refreshPlugins, ({ actor }) => core.plugins.refresh(actor));
  route(routes.trustPlugin, ({ params, body, actor }) =>
    core.plugins.trust(params.id, body.fingerprint, actor),
  );
  route(routes.enablePlugin, ({ params, body, actor }) => core.plugins.enable(params.id, body.scopes, actor));
  route(routes.disablePlugin, ({ params, actor }) => core.plugins.disable(params.id, actor));
  route(routes.checkPluginHealth, ({ params }) => core.plugins.health(params.id));
  route(routes.setPluginLimits, ({ params, body, actor }) =>
    core.plugins.setPolicy(params.id, withoutUndefined(body), actor),
  );
  // Redacted again as they are read: entries stored before a pattern existed, and
  // tokens this api knows (registered as it verified them), never reach a viewer.
  route(routes.pluginLogs, async ({ params, query }) =>
    redactDeep(await core.plugins.logs(params.id, query.limit ?? 100)),
  );
}
