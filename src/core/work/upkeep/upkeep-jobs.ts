// The jobs of time-driven upkeep: a maintenance task (the scheduler's fixed
// tasks and each recurring inspection's run) and one health check (the
// health-checks task fans out one per enabled plugin). Neither is retried: the
// next interval runs it again.
import { z } from 'zod';

export const maintenanceJobSchema = z.discriminatedUnion('task', [
  z.strictObject({ task: z.literal('rediscover') }),
  z.strictObject({ task: z.literal('retention') }),
  z.strictObject({ task: z.literal('health-checks') }),
  z.strictObject({ task: z.literal('recurring-inspection'), scheduleId: z.string().min(1) }),
]);
export type MaintenanceJob = z.infer<typeof maintenanceJobSchema>;

/** One plugin's health check, or (no plugin) every enabled plugin's. */
export const healthJobSchema = z.strictObject({ pluginId: z.string().min(1).optional() });
export type HealthJob = z.infer<typeof healthJobSchema>;
