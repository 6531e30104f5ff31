// The plugins room's door: other rooms and the shells import only from here.
export { flushCallMetrics, renderCallMetrics } from './call-metrics.js';
export {
  REPORT_EVERY_MS,
  reportConfinement,
  withdrawConfinement,
  workerConfinement,
} from './confinement-report.js';
export type { WorkerConfinement } from './confinement-report.js';
export { DEFAULT_RESOURCE_LIMITS, LIMIT_BOUNDS, MAX_ALLOW_READ } from './confinement-settings.js';
export type { ResourceLimits } from './confinement-settings.js';
export { hashExecutable } from './fingerprint.js';
export { followEntries } from './log-follow.js';
export type { PluginDetail, PluginView } from './plugin-rules.js';
export { PluginService } from './plugin-service.js';
export type { InspectionState, LogEntry, PluginSettings } from './plugin-service.js';
export {
  checkOperationTimeout,
  DEFAULT_CALL_CAP_MS,
  formatLimit,
  MAX_LIMIT_MS,
  timeLimitsOf,
} from './time-limits.js';
export type { Redacted } from './result-redaction.js';
export {
  DEFAULT_RETENTION_BATCHES,
  MAX_RETENTION_BATCHES,
  MAX_RETENTION_DAYS,
  MIN_RETENTION_BATCHES,
} from './retention-policy.js';
export { MAX_CONCURRENCY_CAP, parseRate, rateText } from './plugin-caps.js';
export type { CallCaps } from './plugin-caps.js';
export { WorkerSlots, readWorkerBoards, workerSilentForMs } from './worker-slots.js';
export type { SlotView, WorkerBoard } from './worker-slots.js';
export { DEFAULT_HOST_CALL_POLICY } from './plugin-calls.js';
export type { HostCallPolicy } from './plugin-calls.js';
