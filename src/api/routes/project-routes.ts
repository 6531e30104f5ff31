// /api/v1/projects: the project registry and its trust.
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerProjectRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { projects } = runtime;
  route(routes.listProjects, () => projects.listing());
  route(routes.addProject, ({ body, actor }) => projects.add(body.path, withoutUndefined(body), actor));
  route(routes.scanProjects, ({ body, actor }) => projects.scan(body.dir, withoutUndefined(body), actor));
  route(routes.trustProject, ({ params, actor }) => projects.setTrusted(params.id, true, actor));
  route(routes.untrustProject, ({ params, actor }) => projects.setTrusted(params.id, false, actor));
  route(routes.labelProject, ({ params, body, actor }) => projects.addLabels(params.id, body.labels, actor));
  route(routes.unlabelProject, ({ params, actor }) =>
    projects.removeLabels(params.id, [params.label], actor),
  );
  route(routes.removeProject, ({ params, actor }) => projects.remove(params.id, actor));
  // Redacted by the service as read (patterns added since they were stored).
  route(routes.projectHistory, ({ params, query }) =>
    runtime.batches.history(params.id, query.plugin, query.limit),
  );
  route(routes.projectActions, ({ params, query }) => runtime.batches.actions(params.id, query.plugin));
}
