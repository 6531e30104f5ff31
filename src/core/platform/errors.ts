// One error class per way a request or a plugin call can fail. `code` is the
// stable machine name (API, CLI --json, operation records); `callFailure`
// marks faults of the plugin call itself, which record the plugin unhealthy;
// `transient` marks failures a retry may cure.
export abstract class SwitchyardError extends Error {
  abstract readonly code: string;
  readonly callFailure: boolean = false;
  readonly transient: boolean = false;
  /** A caller's mistake (unknown id, bad input): exit 2 / HTTP 4xx. */
  readonly badInput: boolean = false;
}

abstract class BadInputError extends SwitchyardError {
  override readonly badInput = true;
}

export class InvalidInputError extends BadInputError {
  readonly code = 'INVALID_INPUT';
}
/** An id that names nothing (HTTP 404). */
export class NotFoundError extends BadInputError {
  readonly code: string = 'NOT_FOUND';
}
export class PluginNotFoundError extends NotFoundError {
  override readonly code = 'PLUGIN_NOT_FOUND';
  constructor(readonly pluginId: string) {
    super(
      `unknown plugin ${JSON.stringify(pluginId)} (plugin list shows the known ones; plugin refresh rediscovers)`,
    );
  }
}
export class ProjectNotFoundError extends NotFoundError {
  override readonly code = 'PROJECT_NOT_FOUND';
  constructor(readonly projectId: string) {
    super(`unknown project ${JSON.stringify(projectId)} (project list shows the known ones)`);
  }
}
export class PluginUnavailableError extends SwitchyardError {
  readonly code = 'PLUGIN_UNAVAILABLE';
}
export class TrustRequiredError extends SwitchyardError {
  readonly code = 'TRUST_REQUIRED';
}
export class FingerprintChangedError extends SwitchyardError {
  readonly code = 'FINGERPRINT_CHANGED';
  constructor(
    message: string,
    readonly trusted: string,
    readonly current: string | undefined,
  ) {
    super(message);
  }
}
export class PluginDisabledError extends SwitchyardError {
  readonly code = 'PLUGIN_DISABLED';
}
export class PermissionDeniedError extends SwitchyardError {
  readonly code = 'PERMISSION_DENIED';
}
export class ProjectUntrustedError extends SwitchyardError {
  readonly code = 'PROJECT_UNTRUSTED';
}
export class ProtocolMismatchError extends SwitchyardError {
  readonly code = 'PROTOCOL_MISMATCH';
}
export class PackageInvalidError extends SwitchyardError {
  readonly code = 'PACKAGE_INVALID';
}

abstract class CallFailure extends SwitchyardError {
  override readonly callFailure = true;
}
export class IdentityMismatchError extends CallFailure {
  readonly code = 'IDENTITY_MISMATCH';
}
export class PluginTimeoutError extends CallFailure {
  readonly code = 'TIMEOUT';
  override readonly transient = true;
}
export class PluginCrashedError extends CallFailure {
  readonly code = 'CRASHED';
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
  readonly code = 'SPAWN_FAILED';
  override readonly transient = true;
}
export class MalformedResponseError extends CallFailure {
  readonly code = 'MALFORMED_RESPONSE';
  override readonly transient = true;
}
export class OversizedResponseError extends CallFailure {
  readonly code = 'OVERSIZED_RESPONSE';
  override readonly transient = true;
}
export class PluginCallError extends CallFailure {
  readonly code = 'PLUGIN_ERROR';
  constructor(
    readonly rpcCode: number,
    readonly rpcMessage: string,
  ) {
    super(`plugin error ${rpcCode}: ${rpcMessage}`);
  }
}
/** An idempotency key reused with another request (HTTP 409, exit 2); names the operation holding the key. */
export class IdempotencyConflictError extends SwitchyardError {
  readonly code = 'IDEMPOTENCY_CONFLICT';
  constructor(
    readonly idempotencyKey: string,
    readonly operationId: string,
  ) {
    super(
      `idempotency key ${JSON.stringify(idempotencyKey)} is held by operation ${operationId}, which was requested with another plugin, project, action or input; use a new key for a new request`,
    );
  }
}
/** The caller cancelled the call; the plugin's process group was killed. */
export class CallCancelledError extends SwitchyardError {
  readonly code = 'CANCELLED';
}

export function errorCode(error: unknown): string {
  return error instanceof SwitchyardError ? error.code : 'INTERNAL';
}
