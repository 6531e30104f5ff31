// The work/operations room's door: other rooms and the shells import only from here.
export { operateJobSchema } from './operate-job.js';
export { operationActivityMessage, operationCancelMessage } from './operation-messages.js';
export type { OperationActivity } from './operation-messages.js';
export { OperationService } from './operation-service.js';
export type { OperationRequest } from './operation-service.js';
export {
  isTerminal,
  OPERATION_FILTERS,
  OPERATION_STATES,
  operationOutcome,
  OperationStore,
} from './operation-store.js';
export type { OperationFilter, OperationQuery, OperationView, WorkerLost } from './operation-store.js';
export type { OperationRunner } from './operation-runner.js';
