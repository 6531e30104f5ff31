// /api/v1/schedules: recurring batch inspections (`:id` is an id or a name),
// and POST /api/v1/batches/cancel, the bulk cancel by schedule or by state.
import { routes } from '../../core/contract/index.js';
import {
  addSchedule,
  cancelBatches,
  editSchedule,
  listSchedules,
  removeSchedule,
  setSchedulePaused,
} from '../../core/work/upkeep/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerScheduleRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  route(routes.listSchedules, () => listSchedules(runtime));
  route(routes.addSchedule, ({ body, actor }) => addSchedule(runtime, withoutUndefined(body), actor));
  route(routes.editSchedule, ({ params, body, actor }) =>
    editSchedule(runtime, params.id, withoutUndefined(body), actor),
  );
  route(routes.pauseSchedule, ({ params, actor }) => setSchedulePaused(runtime, params.id, true, actor));
  route(routes.resumeSchedule, ({ params, actor }) => setSchedulePaused(runtime, params.id, false, actor));
  route(routes.removeSchedule, ({ params, actor }) => removeSchedule(runtime, params.id, actor));
  route(routes.cancelBatches, ({ body, actor }) =>
    cancelBatches(runtime, body.schedule ? { schedule: body.schedule } : {}, actor),
  );
}
