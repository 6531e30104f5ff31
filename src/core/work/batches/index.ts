// The work/batches room's door: other rooms and the shells import only from here.
export * from './batch-cancellation.js';
export * from './batch-diff.js';
export * from './batch-export.js';
export * from './batch-follow.js';
export * from './batch-notices.js';
export * from './batch-results.js';
export * from './batch-service.js';
export * from './batch-store.js';
export * from './fleet-facts.js';
export * from './inspection-runner.js';
export * from './fair-queue.js';
export * from './inspect-jobs.js';
