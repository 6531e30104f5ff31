// /api/v1/projects: the project registry and its trust.
import { routes } from '../../core/contract/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerProjectRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(routes.listProjects, () => core.projects.listing());
  route(routes.addProject, ({ body, actor }) => core.projects.add(body.path, withoutUndefined(body), actor));
  route(routes.scanProjects, ({ body, actor }) =>
    core.projects.scan(body.dir, withoutUndefined(body), actor),
  );
  route(routes.trustProject, ({ params, actor }) => core.projects.setTrusted(params.id, true, actor));
  route(routes.untrustProject, ({ params, actor }) => core.projects.setTrusted(params.id, false, actor));
  route(routes.labelProject, ({ params, body, actor }) =>
    core.projects.addLabels(params.id, body.labels, actor),
  );
  route(routes.unlabelProject, ({ params, actor }) =>
    core.projects.removeLabels(params.id, [params.label], actor),
  );
  route(routes.removeProject, ({ params, actor }) => core.projects.remove(params.id, actor));
  // Stored redacted as recorded, redacted again as read (patterns added since).
  route(routes.projectHistory, async ({ params, query }) =>
    redactDeep(await runtime.batches.history(params.id, query.plugin, query.limit)),
  );
  route(routes.projectActions, async ({ params, query }) =>
    redactDeep(await runtime.batches.actions(params.id, query.plugin)),
  );
}
