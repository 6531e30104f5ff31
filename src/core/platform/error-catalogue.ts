// Every error code a user can see — in a problem document, in `--json`, in an
// operation record or a batch result — with the HTTP status the api answers
// it with, the exit status the CLI ends with (docs/CLI.md "Exit status") and
// what it means. The api (problems.ts), the CLI (main.ts) and the remote
// client (http.ts) read this table; docs/HTTP-API.md shows it (a test keeps
// the two equal).

/** docs/CLI.md "Exit status". */
export const EXIT = {
  ok: 0,
  /** The requested work failed: a plugin call, an operation, any inspection of a batch. */
  workFailed: 1,
  /** Bad usage or bad input; the message says what to fix. */
  badInput: 2,
  /** No token, an unknown or expired one, or a role without the permission. */
  notAllowed: 4,
  /** Ctrl-C while waiting; the work goes on. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface ErrorEntry {
  /** The api's answer; none for a code only the CLI raises or only a record carries. */
  readonly status?: number;
  readonly exit: ExitCode;
  /** One sentence: what happened. */
  readonly means: string;
}

const { workFailed, badInput, notAllowed, interrupted } = EXIT;

export const ERROR_CATALOGUE = {
  // the caller's mistakes
  INVALID_INPUT: {
    status: 400,
    exit: badInput,
    means: 'The request or an argument is malformed or out of range; the message names what to fix.',
  },
  JSON_TOO_DEEP: { status: 400, exit: badInput, means: 'The request body nests deeper than 64 levels.' },
  BAD_URL: { status: 400, exit: badInput, means: 'The path has a broken `%` escape (encode `%` as `%25`).' },
  USAGE: {
    exit: badInput,
    means: 'The command line is wrong (unknown command or option, missing argument).',
  },
  NOT_FOUND: {
    status: 404,
    exit: badInput,
    means: 'The id names no operation, batch, schedule, token or file.',
  },
  PLUGIN_NOT_FOUND: { status: 404, exit: badInput, means: 'No plugin has this id.' },
  PROJECT_NOT_FOUND: { status: 404, exit: badInput, means: 'No project has this id.' },
  ROUTE_NOT_FOUND: { status: 404, exit: badInput, means: 'The api has no route for this method and path.' },
  METHOD_NOT_ALLOWED: { status: 405, exit: badInput, means: 'The path does not take this method.' },
  BODY_TOO_LARGE: { status: 413, exit: badInput, means: 'The request body is larger than 64 KiB.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    exit: badInput,
    means: 'The request body is not `application/json`.',
  },
  // state conflicts: the request is fine, the state of what it names refuses it
  CONFLICT: { status: 409, exit: badInput, means: 'The current state refuses the request.' },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    exit: badInput,
    means:
      'The idempotency key is held by an operation requested with another plugin, project, action or input (or by a rollout requested with another body).',
  },
  TRUST_REQUIRED: {
    status: 409,
    exit: badInput,
    means: 'The plugin has not been reviewed and trusted by its fingerprint.',
  },
  FINGERPRINT_CHANGED: {
    status: 409,
    exit: badInput,
    means: 'The plugin package changed on disk since it was trusted; it was disabled until reviewed again.',
  },
  PLUGIN_DISABLED: { status: 409, exit: badInput, means: 'The plugin is disabled.' },
  PERMISSION_DENIED: {
    status: 409,
    exit: badInput,
    means: 'The plugin lacks the capability, or was not granted the scope, that the call needs.',
  },
  PLUGIN_UNAVAILABLE: {
    status: 409,
    exit: badInput,
    means: 'The plugin cannot be called now (its package is missing or unreadable).',
  },
  PROTOCOL_MISMATCH: {
    status: 409,
    exit: badInput,
    means: 'The plugin speaks another protocol version than `switchyard.plugin/v1`.',
  },
  PACKAGE_INVALID: {
    status: 409,
    exit: badInput,
    means: 'The plugin package is invalid (manifest, executable or files); the call was refused.',
  },
  PROJECT_UNTRUSTED: { status: 409, exit: badInput, means: 'The project is not trusted.' },
  PROJECT_ROOT_MISSING: {
    status: 409,
    exit: badInput,
    means: "The project's root directory is missing (or not a directory); no plugin was started on it.",
  },
  CANCELLED: {
    status: 409,
    exit: workFailed,
    means: 'The work was cancelled; the plugin processes it had started were killed.',
  },
  // access
  UNAUTHENTICATED: { status: 401, exit: notAllowed, means: 'No token, or an unknown one.' },
  TOKEN_EXPIRED: { status: 401, exit: notAllowed, means: 'The token has expired.' },
  FORBIDDEN: { status: 403, exit: notAllowed, means: "The token's role does not allow this request." },
  CROSS_ORIGIN_REFUSED: {
    status: 403,
    exit: notAllowed,
    means: 'A browser request came from another origin.',
  },
  HOST_NOT_ALLOWED: {
    status: 421,
    exit: notAllowed,
    means: 'The Host header names neither this api nor a name it allows (`--allowed-host`).',
  },
  TOO_MANY_REQUESTS: { status: 429, exit: badInput, means: 'Too many requests; retry later.' },
  TOO_MANY_STREAMS: {
    status: 429,
    exit: badInput,
    means: 'The token (or the api) holds as many open event streams as it may.',
  },
  // the plugin call failed
  TIMEOUT: {
    status: 502,
    exit: workFailed,
    means: 'The plugin did not answer within its time limit; it and every process it started were killed.',
  },
  CRASHED: {
    status: 502,
    exit: workFailed,
    means: 'The plugin process exited or was killed during the call.',
  },
  SPAWN_FAILED: { status: 502, exit: workFailed, means: 'The plugin process could not be started.' },
  RESOURCE_LIMIT: {
    status: 502,
    exit: workFailed,
    means:
      'The call went over one of its resource limits (memory, cpu, file size, processes: `plugin set`); its processes were killed.',
  },
  CONFINEMENT_UNAVAILABLE: {
    status: 503,
    exit: workFailed,
    means:
      'The worker requires kernel confinement (`--require-confinement`) and this host cannot provide all of it; nothing was started.',
  },
  IDENTITY_MISMATCH: {
    status: 502,
    exit: workFailed,
    means: 'The running plugin is not the package that was trusted.',
  },
  MALFORMED_RESPONSE: {
    status: 502,
    exit: workFailed,
    means: 'The plugin answered something that is not valid `switchyard.plugin/v1`.',
  },
  OVERSIZED_RESPONSE: {
    status: 502,
    exit: workFailed,
    means: 'The plugin answered more than the size limit.',
  },
  PLUGIN_ERROR: { status: 502, exit: workFailed, means: 'The plugin answered a JSON-RPC error.' },
  BAD_GATEWAY: { status: 502, exit: workFailed, means: 'Something the api depends on failed.' },
  // codes an operation record or a batch result carries
  PLUGIN_REPORTED_FAILURE: {
    exit: workFailed,
    means: 'The plugin ran the action and reported it failed (its summary is the message).',
  },
  WORKER_LOST: {
    exit: workFailed,
    means:
      'The workers running the work died again and again before it was sent to the plugin; nothing was run.',
  },
  OUTCOME_UNKNOWN: {
    exit: workFailed,
    means:
      'The worker stopped after the operation was sent to the plugin; it may have acted, so check before running it again.',
  },
  // out of reach
  REDIS_UNREACHABLE: {
    status: 503,
    exit: badInput,
    means: 'Redis cannot be reached; the message names the URL and how to start one.',
  },
  REPLICA_ACK_TIMEOUT: {
    status: 503,
    exit: badInput,
    means: 'No Redis replica confirmed the write in time; retry with the same Idempotency-Key.',
  },
  UNAVAILABLE: {
    status: 503,
    exit: badInput,
    means: 'The api cannot answer now (it is stopping); retry shortly.',
  },
  REQUEST_TOO_SLOW: {
    status: 503,
    exit: badInput,
    means:
      'The request took longer than the api lets one request take; narrow it (a filter, a smaller page) or retry.',
  },
  API_UNREACHABLE: {
    exit: badInput,
    means: 'The CLI cannot reach the api, or it answers what the api does not (503, no event stream).',
  },
  INTERRUPTED: {
    exit: interrupted,
    means: 'Ctrl-C while waiting; the work goes on and the message says how to follow or cancel it.',
  },
  INTERNAL: {
    status: 500,
    exit: workFailed,
    means: 'An unexpected error; the api log holds it under the request id.',
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Each code as a constant: `ERROR_CODES.WORKER_LOST`. */
export const ERROR_CODES = Object.fromEntries(Object.keys(ERROR_CATALOGUE).map((code) => [code, code])) as {
  readonly [C in ErrorCode]: C;
};

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, code);
}

/**
 * The code of a problem answered without one (a framework error, a 4xx the
 * framework answered itself): HTTP-API.md promises every error a `code`.
 */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL',
  502: 'BAD_GATEWAY',
  503: 'UNAVAILABLE',
};

/** The catalogue's code for an HTTP status without one; any other 4xx is bad input, any other 5xx internal. */
export function codeForStatus(status: number): ErrorCode {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_INPUT');
}

/** The HTTP status the api answers `code` with (500 for a code it never answers: a bug). */
export function httpStatusOf(code: ErrorCode): number {
  const entry: ErrorEntry = ERROR_CATALOGUE[code];
  return entry.status ?? 500;
}

/**
 * The CLI's exit status for `code`; a code this CLI does not know (a newer
 * api's) by the HTTP status it came with, as that api would have mapped it.
 */
export function exitCodeOf(code: string, status?: number): ExitCode {
  if (isErrorCode(code)) return ERROR_CATALOGUE[code].exit;
  return status === undefined ? workFailed : ERROR_CATALOGUE[codeForStatus(status)].exit;
}
