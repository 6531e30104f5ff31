// The worker process's structured log: an event name and its fields, one JSON line each.
export type WorkerLog = (event: string, fields?: Record<string, unknown>) => void;
