// /api/v1/plugins: review, trust, grants, health, call policy and logs.
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS } from '@switchyard/plugin-sdk/protocol';
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerPluginRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { plugins, batches } = runtime;
  route(routes.listPlugins, () => plugins.list());
  route(routes.showPlugin, async ({ params }) => ({
    ...(await plugins.show(params.id)),
    osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT,
    scopeDescriptions: SCOPE_DESCRIPTIONS,
  }));
  route(routes.refreshPlugins, ({ actor }) => plugins.refresh(actor));
  route(routes.trustPlugin, ({ params, body, actor }) => plugins.trust(params.id, body.fingerprint, actor));
  route(routes.enablePlugin, ({ params, body, actor }) => plugins.enable(params.id, body.scopes, actor));
  route(routes.disablePlugin, ({ params, actor }) => plugins.disable(params.id, actor));
  route(routes.checkPluginHealth, ({ params }) => plugins.health(params.id));
  route(routes.setPluginLimits, ({ params, body, actor }) =>
    plugins.setPolicy(params.id, withoutUndefined(body), actor),
  );
  // Each answer is redacted by the service, as read (patterns added since they were stored).
  route(routes.pluginLogs, ({ params, query }) => plugins.logs(params.id, query.limit ?? 100));
  route(routes.pluginFacts, ({ params, query, signal }) =>
    batches.factsPage(
      params.id,
      withoutUndefined({
        where: query.where,
        labels: query.label,
        facts: query.fact,
        sort: query.sort,
        order: query.order,
        cursor: query.cursor,
        limit: query.limit,
        signal,
      }),
    ),
  );
  route(routes.pluginTrend, ({ params, query }) => batches.trend(params.id, query.batches ?? 10, query.fact));
  route(routes.pluginFactCounts, ({ params, query, signal }) =>
    batches.factCounts(
      params.id,
      query.fact,
      withoutUndefined({ where: query.where, labels: query.label, signal }),
    ),
  );
}
