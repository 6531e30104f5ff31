// /api/v1/rollouts: create a rollout, read it and its projects, approve,
// pause, resume, cancel, retry and export it (rollout-service.ts does the work and checks
// who may: approving needs another admin, resuming past a budget an admin).
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerRolloutRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { rollouts } = runtime;
  route(routes.createRollout, ({ body, actor }) => {
    const { all, labels, where, advertised, projects, input, ...plan } = body;
    return rollouts.create(
      {
        ...withoutUndefined(plan),
        ...(input !== undefined ? { input: input as never } : {}),
        selection: withoutUndefined({ all, labels, where, advertised, projects }),
      },
      actor,
    );
  });
  route(routes.listRollouts, ({ query }) => rollouts.list(withoutUndefined(query)));
  route(routes.resolveRollout, async ({ query }) => ({
    id: await rollouts.resolve(query.ref, withoutUndefined({ pluginId: query.pluginId })),
  }));
  route(routes.getRollout, ({ params }) => rollouts.get(params.id));
  route(routes.rolloutProjects, ({ params, query }) => rollouts.projects(params.id, withoutUndefined(query)));
  route(routes.approveRollout, ({ params, actor }) => rollouts.approve(params.id, actor));
  route(routes.pauseRollout, ({ params, actor }) => rollouts.pause(params.id, actor));
  route(routes.resumeRollout, ({ params, actor }, request) =>
    rollouts.resume(params.id, actor, { admin: request.token?.role === 'admin' }),
  );
  route(routes.cancelRollout, ({ params, actor }) => rollouts.cancel(params.id, actor));
  route(routes.retryRollout, ({ params, actor }) => rollouts.retry(params.id, actor));
  route(
    routes.exportRollout,
    async ({ params, query }, _request, reply) =>
      reply
        .type(query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(await rollouts.export(params.id, query.format)),
    { raw: true },
  );
}
