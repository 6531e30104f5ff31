// The one error model of a switchyard.plugin/v1 exchange, shared by serve()
// (the plugin side), PluginClient and the conformance kit (the host side).
// Each way an exchange can fail is one class with its own `kind`, so callers
// tell them apart with `instanceof` or an exhaustive switch on `kind`, never by
// comparing names. The host keeps its own, differently named error classes
// (one per stable error code) and maps these onto them by `kind`.
import { ERROR_CODES } from './constants.js';

export type ExchangeErrorKind =
  'malformed' | 'oversized' | 'id-mismatch' | 'rpc-error' | 'closed' | 'aborted' | 'busy';

export abstract class ExchangeError extends Error {
  abstract readonly kind: ExchangeErrorKind;
}

/** The line is not one strictly valid JSON-RPC response (or its result is invalid). */
export class InvalidResponseError extends ExchangeError {
  readonly kind = 'malformed';
  override readonly name = 'InvalidResponseError';
}

/** A response line longer than the message limit. */
export class ResponseTooLargeError extends ExchangeError {
  readonly kind = 'oversized';
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly limit: number) {
    super(`response line exceeds ${limit} bytes`);
  }
}

export class IdMismatchError extends ExchangeError {
  readonly kind = 'id-mismatch';
  override readonly name = 'IdMismatchError';
  constructor(
    readonly expected: number,
    readonly received: unknown,
  ) {
    super(`response id ${JSON.stringify(received)} does not match request id ${expected}`);
  }
}

/**
 * A JSON-RPC error object: what serve() answers with, and what PluginClient
 * throws when the plugin answered with one.
 */
export class PluginRpcError extends ExchangeError {
  readonly kind = 'rpc-error';
  override readonly name: string = 'PluginRpcError';
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    message = `plugin error ${code}: ${rpcMessage}`,
  ) {
    super(message);
  }
}

/** A handler may throw this to choose the -32000 (application error) message explicitly. */
export class PluginError extends PluginRpcError {
  override readonly name = 'PluginError';
  constructor(message: string) {
    super(ERROR_CODES.applicationError, message, message);
  }
}

/** stdout ended before a response arrived. */
export class ConnectionClosedError extends ExchangeError {
  readonly kind = 'closed';
  override readonly name = 'ConnectionClosedError';
}

export class RequestAbortedError extends ExchangeError {
  readonly kind = 'aborted';
  override readonly name = 'RequestAbortedError';
}

export class ClientBusyError extends ExchangeError {
  readonly kind = 'busy';
  override readonly name = 'ClientBusyError';
}

/** Every concrete class above: narrowing on `kind` gives each one's own fields. */
export type AnyExchangeError =
  | InvalidResponseError
  | ResponseTooLargeError
  | IdMismatchError
  | PluginRpcError
  | ConnectionClosedError
  | RequestAbortedError
  | ClientBusyError;

export function isExchangeError(error: unknown): error is AnyExchangeError {
  return error instanceof ExchangeError;
}
