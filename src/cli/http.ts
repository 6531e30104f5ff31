// The HTTP client of remote mode: JSON over fetch with the bearer token, and
// problem documents turned back into the errors (and exit codes) the same
// failure has in local mode.
import { ApiUnreachableError, NotAllowedError, RemoteProblemError } from './errors.js';

export interface Problem {
  status: number;
  detail?: string;
  code?: string;
  requiredRole?: string;
}

const TIMEOUT_MS = 60_000;

export class ApiClient {
  constructor(
    readonly url: string,
    readonly token: string | undefined,
  ) {}

  /** GET /healthz (no token): its body whether it answers 200 or 503; undefined when unreachable. */
  async health(): Promise<HealthAnswer | undefined> {
    try {
      const response = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      return (await response.json()) as HealthAnswer;
    } catch {
      return undefined;
    }
  }

  /** GET/POST/DELETE under /api/v1; the parsed answer, or the mapped error. */
  async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; authenticated?: boolean } = {},
  ): Promise<{ status: number; body: T }> {
    if (options.authenticated !== false && !this.token)
      throw new NotAllowedError(
        'UNAUTHENTICATED',
        `no token for ${this.url}: run \`switchyard login --url ${this.url} --token-stdin\` or set SWITCHYARD_TOKEN`,
      );
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.token && options.authenticated !== false) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (options.body !== undefined || method === 'POST') {
      body = JSON.stringify(options.body ?? {});
      headers['content-type'] = 'application/json';
    }
    const target = `${this.url}/api/v1${path}`;
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiUnreachableError(
        `cannot reach the Switchyard API at ${this.url} (${cause?.code ?? cause?.message ?? (error as Error).message}); is \`switchyard api\` or \`switchyard up\` running there?`,
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return { status: response.status, body: parsed as T };
    throw problemError(this.url, { status: response.status, ...(parsed as Omit<Problem, 'status'>) });
  }
}

export interface HealthAnswer {
  workers?: number;
}

export function problemError(url: string, problem: Problem): Error {
  const message = problem.detail ?? `HTTP ${problem.status}`;
  if (problem.status === 401)
    return new NotAllowedError(
      problem.code === 'TOKEN_EXPIRED' ? 'TOKEN_EXPIRED' : 'UNAUTHENTICATED',
      `${message} (${url}; log in again with \`switchyard login --url ${url} --token-stdin\`)`,
    );
  if (problem.status === 403) return new NotAllowedError('FORBIDDEN', message, problem.requiredRole);
  if (problem.status === 503) return new ApiUnreachableError(`the API at ${url} answers 503: ${message}`);
  return new RemoteProblemError(
    problem.code ?? (problem.status >= 500 ? 'INTERNAL' : 'ERROR'),
    message,
    problem.status,
  );
}
