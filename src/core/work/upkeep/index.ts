// The work/upkeep room's door: other rooms and the shells import only from here.
export { SCHEDULER_BEAT_MS } from './liveness.js';
export { MaintenanceService } from './maintenance.js';
export { ScheduleService } from './schedule-service.js';
export { cronProblem } from './schedule-store.js';
export type {
  Schedule,
  ScheduleChanges,
  ScheduleInput,
  ScheduleProjects,
  ScheduleView,
} from './schedule-store.js';
export { healthJobSchema, maintenanceJobSchema } from './upkeep-jobs.js';
export { QueueService } from './queue-view.js';
export type { QueueView } from './queue-view.js';
