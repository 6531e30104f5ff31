// Every Redis key Switchyard owns, under one configurable prefix so several
// installations can share a Redis.
export const DEFAULT_PREFIX = 'switchyard';

export function keysFor(prefix: string = DEFAULT_PREFIX) {
  return {
    prefix,
    plugins: `${prefix}:plugins`,
    pluginHealth: `${prefix}:plugin-health`,
    pluginLogs: (id: string) => `${prefix}:plugin-logs:${id}`,
    projects: `${prefix}:projects`,
    audit: `${prefix}:audit`,
    operations: `${prefix}:operations`,
    operation: (id: string) => `${prefix}:operation:${id}`,
    operationsByTime: `${prefix}:operations-by-time`,
    idempotency: (key: string) => `${prefix}:idempotency:${key}`,
    batches: `${prefix}:batches`,
    batch: (id: string) => `${prefix}:batch:${id}`,
    batchResults: (id: string) => `${prefix}:batch-results:${id}`,
    batchEvents: (id: string) => `${prefix}:batch-events:${id}`,
    latestInspection: `${prefix}:latest-inspection`,
    projectLock: (projectId: string) => `${prefix}:project-lock:${projectId}`,
    fencing: `${prefix}:fencing`,
    bullPrefix: `${prefix}:bull`,
  };
}

export type Keys = ReturnType<typeof keysFor>;
