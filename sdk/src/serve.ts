// serve(): the plugin side of switchyard.plugin/v1 (docs/PROTOCOL.md §6–8).
// Requests are handled strictly in order, one at a time, as the host sends them.
import * as z from 'zod/mini';
import {
  ERROR_CODES,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  type Scope,
} from './constants.js';
import { PluginError, PluginRpcError } from './errors.js';
import { fdIo, streamIo, type ServeStreams } from './serve-io.js';
import { LineSplitter, decodeUtf8 } from './lines.js';
import { identityOf, validateManifest } from './manifest.js';
import {
  HEALTH_STATUSES,
  OPERATE_STATUSES,
  describeIssues,
  initializeParamsSchema,
  methodSchemas,
  requestSchema,
  type Method,
  type MethodParams,
  type Action,
  type Fact,
  type HealthResult,
  type InspectParams,
  type InspectResult,
  type JsonValue,
  type Manifest,
  type OperateParams,
  type OperateResult,
  type RequestId,
  REPORT_INPUT,
} from './schemas.js';

export interface CallContext {
  /** The scopes the host granted this process in `initialize`. */
  grantedScopes: readonly Scope[];
  hostVersion: string;
}

/** What a handler may return: lists may be omitted, times default to now. */
export interface HealthReturn {
  status: HealthResult['status'];
  message?: string;
  checkedAt?: string;
}
export interface InspectReturn {
  summary: string;
  facts?: Fact[] | null;
  actions?: Action[] | null;
  warnings?: string[] | null;
  observedAt?: string;
}
export interface OperateReturn {
  status: OperateResult['status'];
  summary: string;
  output?: JsonValue;
}

type MaybePromise<T> = T | Promise<T>;

export interface PluginHandler {
  /** Defaults to `{status: 'healthy'}`. */
  health?(context: CallContext): MaybePromise<HealthReturn>;
  inspect?(params: InspectParams, context: CallContext): MaybePromise<InspectReturn>;
  operate?(params: OperateParams, context: CallContext): MaybePromise<OperateReturn>;
}

export type { ServeStreams };

export { PluginError };

/** What serve() itself answers with (a JSON-RPC error other than a handler's own -32000). */
const failure = (code: number, message: string) => new PluginRpcError(code, message, message);

/**
 * initialize as serve() reads it: a granted scope that is no known scope value
 * is a permission error (-32003, as the Go SDK answers), not invalid params.
 */
const initializeRequestSchema = z.extend(initializeParamsSchema, {
  grantedScopes: z
    .array(z.string())
    .check(
      z.refine((values) => new Set(values).size === values.length, { message: 'must not repeat a scope' }),
    ),
});

/**
 * Serves one host connection until the input ends. Resolves then; the process
 * exits on its own once nothing else keeps it alive.
 */
export async function serve(
  manifest: Manifest,
  handler: PluginHandler,
  streams?: ServeStreams,
): Promise<void> {
  const checked = validateManifest(manifest);
  if (!checked.ok) {
    throw new Error(`serve(): invalid manifest:\n  ${checked.errors.join('\n  ')}`);
  }
  const session = new Session(checked.manifest, handler);
  const splitter = new LineSplitter(MAX_MESSAGE_BYTES);
  const io = streams ? streamIo(streams) : fdIo();
  for (;;) {
    const chunk = await io.read();
    if (chunk === null) break;
    for (const event of splitter.push(chunk)) await io.write(`${await session.handleEvent(event)}\n`);
  }
  for (const event of splitter.end()) await io.write(`${await session.handleEvent(event)}\n`);
}

type Route = (params: Record<string, unknown>) => Promise<unknown>;

class Session {
  #initialized: { grantedScopes: Scope[]; hostVersion: string } | undefined;
  /** One route per method of the schemas; the compiler insists on each. */
  readonly #routes: ReadonlyMap<string, Route>;

  constructor(
    readonly manifest: Manifest,
    readonly handler: PluginHandler,
  ) {
    const routes: { [M in Method]: Route } = {
      initialize: async (params) => this.initialize(params),
      'plugin.health': (params) => this.health(params),
      'project.inspect': (params) => this.inspect(params),
      'project.operate': (params) => this.operate(params),
    };
    // A Map, so names such as "constructor" or "__proto__" find nothing.
    this.#routes = new Map(Object.entries(routes));
  }

  async handleEvent(event: { kind: 'line'; bytes: Buffer } | { kind: 'oversized' }): Promise<string> {
    if (event.kind === 'oversized') {
      return errorLine(null, ERROR_CODES.parseError, `request line exceeds ${MAX_MESSAGE_BYTES} bytes`);
    }
    return this.handleLine(event.bytes);
  }

  async handleLine(bytes: Buffer): Promise<string> {
    const text = decodeUtf8(bytes);
    if (text === undefined)
      return errorLine(null, ERROR_CODES.parseError, 'parse error: line is not valid UTF-8');
    if (text.trim() === '') {
      return errorLine(null, ERROR_CODES.parseError, 'parse error: empty line');
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return errorLine(null, ERROR_CODES.parseError, 'parse error: line is not valid JSON');
    }
    const envelope = requestSchema.safeParse(value, REPORT_INPUT);
    if (!envelope.success) {
      return errorLine(
        null,
        ERROR_CODES.parseError,
        cut(`invalid request: ${describeIssues(envelope.error).join('; ')}`),
      );
    }
    const { id, method, params = {} } = envelope.data;
    const route = this.#routes.get(method) ?? methodNotFound(method);
    try {
      const result = await route(params);
      return JSON.stringify({ jsonrpc: '2.0', id, result });
    } catch (error) {
      // Only an error response, never `result` beside it (the Go SDK sends both).
      if (error instanceof PluginRpcError) return errorLine(id, error.code, cut(error.rpcMessage));
      const message = error instanceof Error ? error.message : String(error);
      return errorLine(id, ERROR_CODES.applicationError, cut(message || 'plugin handler failed'));
    }
  }

  initialize(params: Record<string, unknown>) {
    if (this.#initialized) throw failure(ERROR_CODES.notInitialized, 'initialize already called');
    const request = parseWith(initializeRequestSchema, params);
    if (request.protocolVersion !== PROTOCOL_VERSION) {
      throw failure(
        ERROR_CODES.protocolMismatch,
        `protocol mismatch: plugin speaks ${PROTOCOL_VERSION}, host asked for ${request.protocolVersion}`,
      );
    }
    const requested: readonly string[] = this.manifest.requestedScopes;
    for (const scope of request.grantedScopes) {
      if (!requested.includes(scope)) {
        throw failure(
          ERROR_CODES.permissionDenied,
          `permission denied: scope ${scope} was not requested by this plugin`,
        );
      }
    }
    // Every granted scope is one of the manifest's, so a known scope value.
    const grantedScopes = request.grantedScopes as Scope[];
    this.#initialized = { grantedScopes, hostVersion: request.hostVersion };
    return {
      protocolVersion: PROTOCOL_VERSION,
      plugin: identityOf(this.manifest),
      grantedScopes,
    };
  }

  async health(params: Record<string, unknown>): Promise<HealthResult> {
    const context = this.context();
    parseParams('plugin.health', params);
    const health = this.handler.health ? await this.handler.health(context) : { status: 'healthy' as const };
    return normalizeHealth(health);
  }

  async inspect(params: Record<string, unknown>): Promise<InspectResult> {
    const context = this.context();
    this.requireGrant('project.inspect', 'project.metadata.read');
    const request = parseParams('project.inspect', params);
    this.requireRootGrant(request.project.root);
    if (!this.handler.inspect) throw new PluginError('this plugin does not implement project.inspect');
    return normalizeInspect(await this.handler.inspect(request, context));
  }

  async operate(params: Record<string, unknown>): Promise<OperateResult> {
    const context = this.context();
    this.requireGrant('project.operate', 'project.operate');
    const request = parseParams('project.operate', params);
    this.requireRootGrant(request.project.root);
    if (!this.handler.operate) throw new PluginError('this plugin does not implement project.operate');
    return normalizeOperate(await this.handler.operate(request, context));
  }

  /** The grants of initialize; every method but initialize needs them. */
  context(): CallContext {
    const session = this.#initialized;
    if (!session) throw failure(ERROR_CODES.notInitialized, 'initialize must be called first');
    return { grantedScopes: session.grantedScopes, hostVersion: session.hostVersion };
  }

  requireGrant(capability: 'project.inspect' | 'project.operate', scope: Scope): void {
    if (!this.manifest.capabilities.includes(capability)) {
      throw failure(
        ERROR_CODES.permissionDenied,
        `permission denied: capability ${capability} is not declared by this plugin`,
      );
    }
    if (!this.#initialized?.grantedScopes.includes(scope)) {
      throw failure(ERROR_CODES.permissionDenied, `permission denied: ${capability} needs scope ${scope}`);
    }
  }

  requireRootGrant(root: string | undefined): void {
    if (root !== undefined && !this.#initialized?.grantedScopes.includes('project.files.read')) {
      throw failure(ERROR_CODES.permissionDenied, 'permission denied: root sent without project.files.read');
    }
  }
}

/** The explicit default of the method table. */
function methodNotFound(method: string): Route {
  return () => Promise.reject(failure(ERROR_CODES.methodNotFound, `method not found: ${method}`));
}

function parseParams<M extends Method>(method: M, params: Record<string, unknown>): MethodParams<M> {
  return parseWith(methodSchemas[method].params, params) as MethodParams<M>;
}

function parseWith<S extends z.core.$ZodType>(schema: S, params: Record<string, unknown>): z.infer<S> {
  const parsed = z.safeParse(schema, params, REPORT_INPUT);
  if (!parsed.success) {
    throw failure(
      ERROR_CODES.invalidParams,
      `invalid params: ${describeIssues(parsed.error, 'params').join('; ')}`,
    );
  }
  return parsed.data;
}

function invalidResult(message: string): never {
  throw failure(ERROR_CODES.internalError, `internal error: ${message}`);
}

function now(): string {
  return new Date().toISOString();
}

function normalizeHealth(value: HealthReturn): HealthResult {
  if (!HEALTH_STATUSES.includes(value?.status)) {
    invalidResult(`invalid health status ${JSON.stringify(value?.status)}`);
  }
  return checkResult('plugin.health', {
    status: value.status,
    ...(value.message === undefined ? {} : { message: value.message }),
    checkedAt: value.checkedAt ?? now(),
  });
}

function normalizeInspect(value: InspectReturn): InspectResult {
  return checkResult('project.inspect', {
    summary: value?.summary,
    facts: value?.facts ?? [],
    actions: value?.actions ?? [],
    warnings: value?.warnings ?? [],
    observedAt: value?.observedAt ?? now(),
  });
}

function normalizeOperate(value: OperateReturn): OperateResult {
  if (!OPERATE_STATUSES.includes(value?.status)) {
    invalidResult(`invalid operation status ${JSON.stringify(value?.status)}`);
  }
  return checkResult('project.operate', {
    status: value.status,
    summary: value.summary,
    output: value.output === undefined ? null : value.output,
  });
}

/** A handler's result must itself be strictly valid, or the host would reject it. */
function checkResult<M extends keyof typeof methodSchemas>(method: M, value: unknown) {
  const parsed = methodSchemas[method].result.safeParse(value, REPORT_INPUT);
  if (!parsed.success)
    invalidResult(`invalid ${method} result: ${describeIssues(parsed.error, 'result').join('; ')}`);
  return parsed.data as never;
}

function cut(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  let end = MAX_ERROR_MESSAGE_CHARS - 1;
  // Never leave half of a surrogate pair: a strict decoder would turn it into U+FFFD.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${message.slice(0, end)}…`;
}

function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}
