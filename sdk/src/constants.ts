// Exact identifiers and limits of switchyard.plugin/v1 (docs/PROTOCOL.md §2, §6–8).

export const PROTOCOL_VERSION = 'switchyard.plugin/v1';
export const MANIFEST_SCHEMA_VERSION = 'switchyard.plugin-manifest/v1';

/** One JSON-RPC message (a line, without its newline) in either direction. */
export const MAX_MESSAGE_BYTES = 1_048_576;
/** Arrays and objects nest at most this deep in a response (a deeper one would overflow a recursive reader). */
export const MAX_RESPONSE_DEPTH = 64;
/** plugin.json is read bounded. */
export const MAX_MANIFEST_BYTES = 65_536;
export const MAX_EXECUTABLE_BYTES = 134_217_728;
/** -32000 application error messages are cut to this many characters. */
export const MAX_ERROR_MESSAGE_CHARS = 1_024;

export const CAPABILITIES = ['project.inspect', 'project.operate'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope lets a plugin do; shown on every review surface. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'project.metadata.read': "Receive a project's id and display name (required for project.inspect).",
  'project.files.read':
    "Receive the project's root path, so the plugin can read the project's files on disk.",
  'project.operate': 'Run the typed actions it declares on a project, each as a durable, audited operation.',
};

export const ERROR_CODES = {
  parseError: -32700,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  applicationError: -32000,
  protocolMismatch: -32001,
  notInitialized: -32002,
  permissionDenied: -32003,
} as const;
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** The environment variable a host sets for every plugin process (PROTOCOL §9). */
export const PROTOCOL_ENV_VAR = 'SWITCHYARD_PLUGIN_PROTOCOL';

/** docs/PROTOCOL.md §11, verbatim in meaning; every review surface prints it. */
export const OS_TRUST_BOUNDARY_STATEMENT =
  'Plugins run with the operating-system identity of the user who runs the worker. Where the kernel allows it, the host confines every call to what the review granted — files, network, signals and resource limits; what each worker enforces and what it does not is listed with the plugin — but even confined this is not a full OS sandbox (same user, shared kernel): trusting a plugin means trusting locally installed executable code, not only approving API scopes.';
