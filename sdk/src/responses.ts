// Reading one response line, the same way for PluginClient and the
// conformance kit. Strict: unknown fields at the envelope or in `error` are
// invalid. One allowance for plugins built with the Go SDK: it answers a
// handler error with `result` (the zero value of its result struct) AND
// `error`; a well-formed `error` is then that error, whatever `result` holds.
import { MAX_RESPONSE_DEPTH } from './constants.js';
import { decodeUtf8 } from './lines.js';
import * as z from 'zod/mini';
import {
  REPORT_INPUT,
  describeIssues,
  errorResponseSchema,
  successResponseSchema,
  type RpcError,
} from './schemas.js';

export type Reply =
  | { kind: 'result'; id: unknown; result: unknown }
  | {
      kind: 'error';
      id: unknown;
      error: RpcError;
      /** The response also carried `result` (as the Go SDK sends); the TypeScript SDK never does. */
      withResult: boolean;
    }
  | { kind: 'invalid'; reason: string };

/** An error response that may also carry `result` (ignored); still strict otherwise. */
const errorWithResultSchema = z.extend(errorResponseSchema, { result: z.optional(z.unknown()) });

/** Interprets one complete response line (without its newline). */
export function readResponse(bytes: Buffer): Reply {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { kind: 'invalid', reason: 'response line is not valid UTF-8' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      kind: 'invalid',
      reason: `response is not exactly one JSON document: ${JSON.stringify(text.slice(0, 80))}`,
    };
  }
  if (deeperThan(value, MAX_RESPONSE_DEPTH)) {
    return {
      kind: 'invalid',
      reason: `response is nested deeper than ${MAX_RESPONSE_DEPTH} levels of arrays and objects`,
    };
  }
  if (typeof value === 'object' && value !== null && 'error' in value) {
    const failure = errorWithResultSchema.safeParse(value, REPORT_INPUT);
    if (!failure.success) {
      return {
        kind: 'invalid',
        reason: `invalid error response: ${describeIssues(failure.error).join('; ')}`,
      };
    }
    return {
      kind: 'error',
      id: failure.data.id,
      error: failure.data.error,
      withResult: 'result' in value,
    };
  }
  const success = successResponseSchema.safeParse(value, REPORT_INPUT);
  if (!success.success) {
    return { kind: 'invalid', reason: `invalid response: ${describeIssues(success.error).join('; ')}` };
  }
  return { kind: 'result', id: success.data.id, result: success.data.result };
}

/**
 * Whether `value` has arrays or objects nested more than `limit` deep. Walks
 * with its own stack, not recursion: the value may be 200,000 levels deep.
 */
function deeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}
