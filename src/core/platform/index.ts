// The platform room's door: other rooms and the shells import only from here.
export { inOrder } from './concurrency.js';
export {
  codeForStatus,
  ERROR_CODES,
  EXIT,
  exitCodeOf,
  httpStatusOf,
  isErrorCode,
} from './error-catalogue.js';
export type { ErrorCode, ExitCode } from './error-catalogue.js';
export { ENVIRONMENT, readEnv, readWholeNumberEnv } from './environment.js';
export type { EnvironmentName } from './environment.js';
export {
  CallCancelledError,
  ConfinementUnavailableError,
  ConflictError,
  errorCode,
  FingerprintChangedError,
  IdempotencyConflictError,
  IdentityMismatchError,
  InvalidInputError,
  MalformedResponseError,
  NotFoundError,
  OversizedResponseError,
  PackageInvalidError,
  NotPermittedError,
  PermissionDeniedError,
  PluginCallError,
  PluginCrashedError,
  PluginDisabledError,
  PluginNotFoundError,
  PluginTimeoutError,
  PluginUnavailableError,
  ProjectNotFoundError,
  ProjectRootMissingError,
  ProjectUntrustedError,
  ProtocolMismatchError,
  ResourceLimitError,
  SpawnFailedError,
  SwitchyardError,
  TrustRequiredError,
} from './errors.js';
export { ABORT_REASONS, abortReasonOf, FinalJobError, messageOf } from './job-errors.js';
export { MAX_LIST_LIMIT } from './list-limits.js';
export { createLogger, eventLogger } from './log.js';
export { runUntilSignalled } from './run-until-signalled.js';
export type { ReadyMessage, Service } from './run-until-signalled.js';
export { sleep, sleepUntilWoken } from './sleep.js';
export { withoutUndefined } from './without-undefined.js';
