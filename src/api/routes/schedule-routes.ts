// /api/v1/schedules: recurring batch inspections.
import { routes } from '../../core/contract/index.js';
import { addSchedule, removeSchedule } from '../../core/work/upkeep/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';

export function registerScheduleRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  route(routes.listSchedules, () => runtime.schedules.list());
  route(routes.addSchedule, ({ body, actor }) => addSchedule(runtime, withoutUndefined(body), actor));
  route(routes.removeSchedule, ({ params, actor }) => removeSchedule(runtime, params.id, actor));
}
