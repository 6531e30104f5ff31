// Errors of the CLI's own making, beside the core's: a refusal for lack of a
// token or a role (exit 4), a problem the API answered (the same code and
// exit status the core error would have had locally), an API out of reach.
import { SwitchyardError } from '../core/platform/index.js';

/** Exit 4 (CLI.md): no token, an unknown or expired one, or a role without the permission. */
export class NotAllowedError extends Error {
  readonly exitCode = 4;
  constructor(
    readonly code: 'UNAUTHENTICATED' | 'TOKEN_EXPIRED' | 'FORBIDDEN',
    message: string,
    readonly requiredRole?: string,
  ) {
    super(message);
  }
}

/** An API problem document, as the error the core raised on the other side. */
export class RemoteProblemError extends SwitchyardError {
  override readonly callFailure: boolean;
  override readonly badInput: boolean;
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.callFailure = status === 502;
    this.badInput = status >= 400 && status < 500;
  }
}

/** The API cannot be reached, or answers that Redis cannot (503): exit 2, as an unreachable Redis is locally. */
export class ApiUnreachableError extends Error {
  readonly code = 'API_UNREACHABLE';
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
