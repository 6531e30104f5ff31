// Errors of the CLI's own making, beside the core's: a refusal for lack of a
// token or a role (exit 4), a problem the API answered (the same code and
// exit status the core error would have had locally), an API out of reach.
// Their exit statuses are error-catalogue.ts's, as every error's.
import { ERROR_CODES, SwitchyardError, type ErrorCode } from '../core/platform/index.js';

/** Exit 4 (CLI.md): no token, an unknown or expired one, or a role without the permission. */
export class NotAllowedError extends SwitchyardError {
  constructor(
    /** A code whose exit status is 4: UNAUTHENTICATED, TOKEN_EXPIRED, FORBIDDEN, … */
    readonly code: ErrorCode,
    message: string,
    readonly requiredRole?: string,
  ) {
    super(message);
  }
}

/** An API problem document, as the error the core raised on the other side. */
export class RemoteProblemError extends SwitchyardError {
  override readonly callFailure: boolean;
  override readonly httpStatus: number;
  constructor(
    /** The api's code; one this CLI does not know (a newer api's) is kept as it came. */
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.httpStatus = status;
    this.callFailure = status === 502;
  }
}

/** The API cannot be reached, or answers that Redis cannot (503): exit 2, as an unreachable Redis is locally. */
export class ApiUnreachableError extends SwitchyardError {
  readonly code = ERROR_CODES.API_UNREACHABLE;
  override readonly transient = true;
}

/**
 * The API answered, but not as it does (no event stream where one was asked
 * for, an event past any sane size): a broken server or a proxy in the way.
 * Exit 2 as when unreachable; a wait tries again until it gives up.
 */
export class ApiMisbehavingError extends ApiUnreachableError {}

/** One server event over the reader's bound: a wait reads the record with a GET instead. */
export class EventTooLargeError extends ApiMisbehavingError {}

/** An answer (or event) that is not what the route's contract says: not worth asking again. */
export class MalformedAnswerError extends ApiMisbehavingError {}
