// /api/v1/schedules: recurring batch inspections (`:id` is an id or a name),
// and POST /api/v1/batches/cancel, the bulk cancel by schedule or by state.
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerScheduleRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { schedules } = runtime;
  route(routes.listSchedules, () => schedules.list());
  // The token's role decides whether `priority: high` is allowed (none: the local OS user).
  route(routes.addSchedule, ({ body, actor }, request) =>
    schedules.add(withoutUndefined(body), actor, request.token?.role),
  );
  route(routes.editSchedule, ({ params, body, actor }, request) =>
    schedules.edit(params.id, withoutUndefined(body), actor, request.token?.role),
  );
  route(routes.pauseSchedule, ({ params, actor }) => schedules.setPaused(params.id, true, actor));
  route(routes.resumeSchedule, ({ params, actor }) => schedules.setPaused(params.id, false, actor));
  route(routes.removeSchedule, ({ params, actor }) => schedules.remove(params.id, actor));
  route(routes.cancelBatches, ({ body, actor }) =>
    schedules.cancelBatches(body.schedule ? { schedule: body.schedule } : {}, actor),
  );
}
