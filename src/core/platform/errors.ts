// One error class per way a request or a plugin call can fail. `code` is the
// stable machine name (API, CLI --json, operation records), one of
// error-catalogue.ts, which gives its HTTP status and exit status;
// `callFailure` marks faults of the plugin call itself, which record the
// plugin unhealthy; `transient` marks failures a retry may cure.
import { ERROR_CODES, type ErrorCode } from './error-catalogue.js';

export abstract class SwitchyardError extends Error {
  /** An ErrorCode; only an error relayed from another api (the CLI's RemoteProblemError) may carry one this build does not know. */
  abstract readonly code: string;
  readonly callFailure: boolean = false;
  readonly transient: boolean = false;
  /** The HTTP status the error arrived with, when it came from the api (the CLI's remote mode). */
  readonly httpStatus: number | undefined = undefined;
}

export class InvalidInputError extends SwitchyardError {
  readonly code = ERROR_CODES.INVALID_INPUT;
}
/** An id that names nothing (HTTP 404). */
export class NotFoundError extends SwitchyardError {
  readonly code: ErrorCode = ERROR_CODES.NOT_FOUND;
}
export class PluginNotFoundError extends NotFoundError {
  override readonly code = ERROR_CODES.PLUGIN_NOT_FOUND;
  constructor(readonly pluginId: string) {
    super(
      `unknown plugin ${JSON.stringify(pluginId)} (plugin list shows the known ones; plugin refresh rediscovers)`,
    );
  }
}
export class ProjectNotFoundError extends NotFoundError {
  override readonly code = ERROR_CODES.PROJECT_NOT_FOUND;
  constructor(readonly projectId: string) {
    super(`unknown project ${JSON.stringify(projectId)} (project list shows the known ones)`);
  }
}
export class PluginUnavailableError extends SwitchyardError {
  readonly code = ERROR_CODES.PLUGIN_UNAVAILABLE;
}
export class TrustRequiredError extends SwitchyardError {
  readonly code = ERROR_CODES.TRUST_REQUIRED;
}
export class FingerprintChangedError extends SwitchyardError {
  readonly code = ERROR_CODES.FINGERPRINT_CHANGED;
  constructor(
    message: string,
    readonly trusted: string,
    readonly current: string | undefined,
  ) {
    super(message);
  }
}
export class PluginDisabledError extends SwitchyardError {
  readonly code = ERROR_CODES.PLUGIN_DISABLED;
}
export class PermissionDeniedError extends SwitchyardError {
  readonly code = ERROR_CODES.PERMISSION_DENIED;
}
/** Who asks may not do this, whatever their role (a rollout's creator approving it): HTTP 403, exit 4. */
export class NotPermittedError extends SwitchyardError {
  readonly code = ERROR_CODES.FORBIDDEN;
}
export class ProjectUntrustedError extends SwitchyardError {
  readonly code = ERROR_CODES.PROJECT_UNTRUSTED;
}
/** The project's root is gone or not a directory: nothing may be called on it (HTTP 409, exit 2). */
export class ProjectRootMissingError extends SwitchyardError {
  readonly code = ERROR_CODES.PROJECT_ROOT_MISSING;
  constructor(
    readonly projectId: string,
    readonly root: string,
  ) {
    super(
      `project ${projectId}'s root ${root} is missing or not a directory; restore it, or forget the project with \`project remove ${projectId}\``,
    );
  }
}
/** The state of what the request names refuses it (HTTP 409, exit 2); the message names what holds it. */
export class ConflictError extends SwitchyardError {
  readonly code = ERROR_CODES.CONFLICT;
}
export class ProtocolMismatchError extends SwitchyardError {
  readonly code = ERROR_CODES.PROTOCOL_MISMATCH;
}
export class PackageInvalidError extends SwitchyardError {
  readonly code = ERROR_CODES.PACKAGE_INVALID;
}

abstract class CallFailure extends SwitchyardError {
  override readonly callFailure = true;
}
export class IdentityMismatchError extends CallFailure {
  readonly code = ERROR_CODES.IDENTITY_MISMATCH;
}
export class PluginTimeoutError extends CallFailure {
  readonly code = ERROR_CODES.TIMEOUT;
  override readonly transient = true;
}
/** The call went over a resource limit (RLIMIT or cgroup); `limits` names which. */
export class ResourceLimitError extends CallFailure {
  readonly code = ERROR_CODES.RESOURCE_LIMIT;
  constructor(
    message: string,
    readonly limits: readonly string[],
  ) {
    super(message);
  }
}
/** The host cannot confine a call as `--require-confinement` demands: nothing was started. */
export class ConfinementUnavailableError extends SwitchyardError {
  readonly code = ERROR_CODES.CONFINEMENT_UNAVAILABLE;
}
export class PluginCrashedError extends CallFailure {
  readonly code = ERROR_CODES.CRASHED;
  override readonly transient = true;
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
  ) {
    super(message);
  }
}
export class SpawnFailedError extends CallFailure {
  readonly code = ERROR_CODES.SPAWN_FAILED;
  override readonly transient = true;
}
export class MalformedResponseError extends CallFailure {
  readonly code = ERROR_CODES.MALFORMED_RESPONSE;
  override readonly transient = true;
}
export class OversizedResponseError extends CallFailure {
  readonly code = ERROR_CODES.OVERSIZED_RESPONSE;
  override readonly transient = true;
}
export class PluginCallError extends CallFailure {
  readonly code = ERROR_CODES.PLUGIN_ERROR;
  constructor(
    readonly rpcCode: number,
    readonly rpcMessage: string,
  ) {
    super(`plugin error ${rpcCode}: ${rpcMessage}`);
  }
}
/**
 * An idempotency key reused with another request (HTTP 409, exit 2); names what holds the key:
 * an operation, or a rollout (`rolloutId`: POST /rollouts and /retry, whose key is a header).
 */
export class IdempotencyConflictError extends SwitchyardError {
  readonly code = ERROR_CODES.IDEMPOTENCY_CONFLICT;
  constructor(
    readonly idempotencyKey: string,
    readonly operationId: string,
    rolloutId?: string,
  ) {
    super(
      rolloutId
        ? `the Idempotency-Key header ${JSON.stringify(idempotencyKey)} is held by rollout ${rolloutId}, which was requested with another body; use a new key for a new request`
        : `idempotency key ${JSON.stringify(idempotencyKey)} is held by operation ${operationId}, which was requested with another plugin, project, action or input; use a new key for a new request`,
    );
  }
}
/** The caller cancelled the call; the plugin and its processes were killed. */
export class CallCancelledError extends SwitchyardError {
  readonly code = ERROR_CODES.CANCELLED;
}

export function errorCode(error: unknown): string {
  return error instanceof SwitchyardError ? error.code : ERROR_CODES.INTERNAL;
}
