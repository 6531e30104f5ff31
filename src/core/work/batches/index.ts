// The work/batches room's door: other rooms and the shells import only from here.
export { hasDifferences } from './batch-diff.js';
export type { BatchDiff } from './batch-diff.js';
export { EXPORT_FORMATS, fleetCsv, isExportFormat } from './batch-export.js';
export type { ExportFormat } from './batch-export.js';
export { batchCancelMessage, batchProgressMessage } from './batch-messages.js';
export { RESULT_STATUSES } from './batch-results.js';
export { BatchService } from './batch-service.js';
export type { FleetQuery, ProjectSelection } from './batch-service.js';
export { BATCH_STATES, BatchStore, isBatchOver, KEEP_PER_PLUGIN, withoutResults } from './batch-store.js';
export type { BatchQuery, BatchState, BatchView, HistoryEntry, ProjectOutcome } from './batch-store.js';
export { countFactValues } from './fleet-facts.js';
export type { FleetRow } from './fleet-facts.js';
export { PRIORITIES, RECONCILE_EVERY_MS } from './fair-queue.js';
export { checkPriority } from './batch-service.js';
export type { Priority } from './fair-queue.js';
export { inspectJobSchema } from './inspect-jobs.js';
export type { InspectionRunner } from './inspection-runner.js';
