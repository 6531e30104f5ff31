// Calls of the HTTP API by its contract (core/contract): the path filled in
// from the route's parameters, the query from its fields, and every answer
// (and every event of a stream) parsed with the route's own schema, so a
// malformed answer is an error naming the route and what was wrong, never a
// value with a missing field further on.
import type { z } from 'zod';
import type { Answer, BodyIn, HttpRoute, PathParams, QueryIn } from '../core/contract/index.js';
import { escapeControl } from '../core/safety/index.js';
import { MalformedAnswerError } from './cli-errors.js';
import type { Transport } from './transport.js';

export interface CallInput<R extends HttpRoute> {
  params?: Record<PathParams<R['path']>, string>;
  query?: QueryIn<R>;
  body?: BodyIn<R>;
  headers?: Record<string, string>;
}

/** The path under /api/v1 of a call: parameters encoded, given query fields appended. */
export function pathOf<R extends HttpRoute>(route: R, input: CallInput<R> = {}): string {
  const params = (input.params ?? {}) as Record<string, string>;
  const path = route.path.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(params[name]!));
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    // A list is the field repeated (`?where=a&where=b`).
    if (Array.isArray(value)) for (const item of value) search.append(key, String(item));
    else if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** One call; its status and its answer as the route's response schema parses it. */
export async function callRoute<R extends HttpRoute>(
  api: Transport,
  route: R,
  input: CallInput<R> = {},
): Promise<{ status: number; body: Answer<R> }> {
  const path = pathOf(route, input);
  const { status, body } = await api.request<unknown>(route.method, path, {
    ...(input.body !== undefined ? { body: input.body } : {}),
    ...(input.headers ? { headers: input.headers } : {}),
  });
  return {
    status,
    body: checkedAnswer(api.url, `${route.method} ${path}`, route.response, body) as Answer<R>,
  };
}

/** The data of one event of a route's stream, parsed with the route's schema for that event. */
export function eventData<R extends HttpRoute>(
  api: Transport,
  route: R,
  path: string,
  name: string,
  data: string,
) {
  const schema = route.events?.[name];
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new MalformedAnswerError(
      `the API at ${api.url} sent a \`${escapeControl(name)}\` event on ${path} whose data is not JSON (a broken server or proxy?)`,
    );
  }
  return checkedAnswer(api.url, `a \`${escapeControl(name)}\` event on ${path}`, schema, value);
}

/** `value` as `schema` parses it (unknown fields dropped); MalformedAnswerError naming what is wrong otherwise. */
export function checkedAnswer(
  url: string,
  what: string,
  schema: z.ZodType | undefined,
  value: unknown,
): unknown {
  if (!schema) return value;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new MalformedAnswerError(
    `the API at ${url} answered ${what} with a body this CLI cannot use (${issuesOf(parsed.error)}); is it a Switchyard API of the same version?`,
  );
}

const SHOWN_ISSUES = 3;

function issuesOf(error: z.ZodError): string {
  const shown = error.issues
    .slice(0, SHOWN_ISSUES)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'the body'}: ${issue.message}`);
  const more = error.issues.length - SHOWN_ISSUES;
  // The path can hold keys the server chose: no control character of theirs reaches the terminal.
  return escapeControl(shown.join('; ') + (more > 0 ? `; and ${more} more` : ''));
}
