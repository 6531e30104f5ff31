// /api/v1/schedules: recurring batch inspections.
import { z } from 'zod';
import { addSchedule, removeSchedule } from '../../core/work/upkeep/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { bodies } from '../schemas.js';

export function registerScheduleRoutes({ route, body, param, actorOf }: RouteKit, { runtime }: ApiDeps) {
  route('GET', '/schedules', 'viewer', 'recurring inspections', () => runtime.schedules.list(), {
    response: z.array(responses.schedule),
  });
  route(
    'POST',
    '/schedules',
    'admin',
    'add a recurring inspection (an interval or a cron pattern)',
    async (request) => addSchedule(runtime, body(bodies.addSchedule, request), actorOf(request)),
    { body: bodies.addSchedule, status: 201, response: responses.schedule },
  );
  route(
    'DELETE',
    '/schedules/:id',
    'admin',
    'stop a recurring inspection',
    async (request) => removeSchedule(runtime, param(request, 'id'), actorOf(request)),
    { response: responses.removedSchedule },
  );
}
