// serve(): the plugin side of switchyard.plugin/v1 (PROTOCOL.md §6–8).
// Requests are handled strictly in order, one at a time, as the host sends them.
import type { Readable, Writable } from 'node:stream';
import {
  ERROR_CODES,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  type Scope,
} from './constants.js';
import { LineSplitter, decodeUtf8 } from './lines.js';
import { identityOf, validateManifest } from './manifest.js';
import {
  HEALTH_STATUSES,
  OPERATE_STATUSES,
  describeIssues,
  methodSchemas,
  requestSchema,
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

export interface ServeStreams {
  input: Readable;
  output: Writable;
}

/** A handler may throw this to choose the -32000 message explicitly. */
export class PluginError extends Error {
  override readonly name = 'PluginError';
}

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

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

interface LineIo {
  /** The next chunk of input; null at its end. */
  read(): Promise<Buffer | null>;
  write(text: string): Promise<void>;
}

/** Node streams (tests, embedding): 'data' events with pause/resume, so input waits for us. */
function streamIo({ input, output }: ServeStreams): LineIo {
  const queue: (Buffer | null | Error)[] = [];
  let wake: (() => void) | undefined;
  const push = (item: Buffer | null | Error) => {
    queue.push(item);
    wake?.();
  };
  input.on('data', (chunk: Buffer | string) => {
    input.pause();
    push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  });
  input.once('end', () => push(null));
  input.once('error', (error) => push(error));
  return {
    async read() {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = queue.shift()!;
      if (item instanceof Error) throw item;
      if (item !== null) input.resume();
      return item;
    },
    write: (text) =>
      new Promise<void>((resolve, reject) => {
        output.write(text, (error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * The real stdin/stdout of a plugin process, read and written on the file
 * descriptors directly: constructing process.stdin and process.stdout costs
 * several milliseconds of every call's start-up (bench/cold-start).
 */
function fdIo(): LineIo {
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const retry = <T>(operation: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      const attempt = () =>
        operation((error, value) => {
          // A non-blocking descriptor inherited from the host: wait a moment, try again.
          if (error?.code === 'EAGAIN') setTimeout(attempt, 1);
          else if (error) reject(error);
          else resolve(value);
        });
      attempt();
    });
  return {
    async read() {
      const bytes = await retry<number>((done) => fs.read(0, buffer, 0, buffer.length, null, done));
      // The splitter copies what it keeps, so the buffer can be reused.
      return bytes === 0 ? null : buffer.subarray(0, bytes);
    },
    async write(text) {
      let data = Buffer.from(text);
      while (data.length > 0) {
        const written = await retry<number>((done) => fs.write(1, data, 0, data.length, null, done));
        data = data.subarray(written);
      }
    },
  };
}

class Session {
  #initialized: { grantedScopes: Scope[]; hostVersion: string } | undefined;

  constructor(
    readonly manifest: Manifest,
    readonly handler: PluginHandler,
  ) {}

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
    try {
      const result = await this.dispatch(method, params);
      return JSON.stringify({ jsonrpc: '2.0', id, result });
    } catch (error) {
      if (error instanceof RpcFailure) return errorLine(id, error.code, cut(error.message));
      const message = error instanceof Error ? error.message : String(error);
      return errorLine(id, ERROR_CODES.applicationError, cut(message || 'plugin handler failed'));
    }
  }

  async dispatch(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!Object.hasOwn(methodSchemas, method)) {
      throw new RpcFailure(ERROR_CODES.methodNotFound, `method not found: ${method}`);
    }
    if (method === 'initialize') return this.initialize(params);
    const session = this.#initialized;
    if (!session) throw new RpcFailure(ERROR_CODES.notInitialized, 'initialize must be called first');
    const context: CallContext = { grantedScopes: session.grantedScopes, hostVersion: session.hostVersion };

    if (method === 'plugin.health') {
      parseParams('plugin.health', params);
      const health = this.handler.health
        ? await this.handler.health(context)
        : { status: 'healthy' as const };
      return normalizeHealth(health);
    }
    if (method === 'project.inspect') {
      this.requireGrant('project.inspect', 'project.metadata.read');
      const request = parseParams('project.inspect', params);
      this.requireRootGrant(request.project.root);
      if (!this.handler.inspect) throw new PluginError('this plugin does not implement project.inspect');
      return normalizeInspect(await this.handler.inspect(request, context));
    }
    this.requireGrant('project.operate', 'project.operate');
    const request = parseParams('project.operate', params);
    this.requireRootGrant(request.project.root);
    if (!this.handler.operate) throw new PluginError('this plugin does not implement project.operate');
    return normalizeOperate(await this.handler.operate(request, context));
  }

  initialize(params: Record<string, unknown>) {
    if (this.#initialized) throw new RpcFailure(ERROR_CODES.notInitialized, 'initialize already called');
    const request = parseParams('initialize', params);
    if (request.protocolVersion !== PROTOCOL_VERSION) {
      throw new RpcFailure(
        ERROR_CODES.protocolMismatch,
        `protocol mismatch: plugin speaks ${PROTOCOL_VERSION}, host asked for ${request.protocolVersion}`,
      );
    }
    for (const scope of request.grantedScopes) {
      if (!this.manifest.requestedScopes.includes(scope)) {
        throw new RpcFailure(
          ERROR_CODES.permissionDenied,
          `permission denied: scope ${scope} was not requested by this plugin`,
        );
      }
    }
    this.#initialized = { grantedScopes: request.grantedScopes, hostVersion: request.hostVersion };
    return {
      protocolVersion: PROTOCOL_VERSION,
      plugin: identityOf(this.manifest),
      grantedScopes: request.grantedScopes,
    };
  }

  requireGrant(capability: 'project.inspect' | 'project.operate', scope: Scope): void {
    if (!this.manifest.capabilities.includes(capability)) {
      throw new RpcFailure(
        ERROR_CODES.permissionDenied,
        `permission denied: capability ${capability} is not declared by this plugin`,
      );
    }
    if (!this.#initialized?.grantedScopes.includes(scope)) {
      throw new RpcFailure(
        ERROR_CODES.permissionDenied,
        `permission denied: ${capability} needs scope ${scope}`,
      );
    }
  }

  requireRootGrant(root: string | undefined): void {
    if (root !== undefined && !this.#initialized?.grantedScopes.includes('project.files.read')) {
      throw new RpcFailure(
        ERROR_CODES.permissionDenied,
        'permission denied: root sent without project.files.read',
      );
    }
  }
}

function parseParams<M extends keyof typeof methodSchemas>(method: M, params: Record<string, unknown>) {
  const parsed = methodSchemas[method].params.safeParse(params, REPORT_INPUT);
  if (!parsed.success) {
    throw new RpcFailure(
      ERROR_CODES.invalidParams,
      `invalid params: ${describeIssues(parsed.error, 'params').join('; ')}`,
    );
  }
  return parsed.data as ReturnType<(typeof methodSchemas)[M]['params']['parse']>;
}

function invalidResult(message: string): never {
  throw new RpcFailure(ERROR_CODES.internalError, `internal error: ${message}`);
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
