// The host's reading of the SDK's error model (sdk errors.ts): each kind of
// failed exchange becomes the host error with its stable code. An exhaustive
// switch on `kind`, so a new kind in the SDK fails the build here.
import { isExchangeError } from '@switchyard/plugin-sdk/host';
import {
  CallCancelledError,
  MalformedResponseError,
  OversizedResponseError,
  PluginCallError,
  PluginCrashedError,
  type SwitchyardError,
} from '../platform/index.js';

import type { ProcessExit } from './call-process.js';

export function hostErrorOf(error: unknown, exit: ProcessExit | undefined): SwitchyardError {
  if (!isExchangeError(error)) {
    return new MalformedResponseError(error instanceof Error ? error.message : String(error));
  }
  switch (error.kind) {
    case 'rpc-error':
      return new PluginCallError(error.code, error.rpcMessage);
    case 'oversized':
      return new OversizedResponseError(error.message);
    case 'malformed':
    case 'id-mismatch':
      return new MalformedResponseError(error.message);
    case 'closed': {
      const how = exit?.signal
        ? `was killed by ${exit.signal}`
        : `exited with code ${exit?.code ?? 'unknown'}`;
      return new PluginCrashedError(
        `the plugin ${how} without answering`,
        exit?.code ?? null,
        exit?.signal ?? null,
      );
    }
    case 'aborted':
      return new CallCancelledError('the call was cancelled; its processes were killed');
    case 'busy':
      // The supervisor sends one request at a time; reaching this is a host bug.
      return new MalformedResponseError(error.message);
  }
}
