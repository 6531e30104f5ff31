// @ts-check
// The API client: bearer token from sessionStorage, problem+json errors,
// Server-Sent Events read with fetch() (EventSource cannot send Authorization)
// and the contract's reader (server-events.js, bundled from src/core/contract at build).

import { serverEvents, textChunks } from './server-events.js';

const TOKEN_KEY = 'switchyard.token';
const BASE = '/api/v1';

/** @typedef {import('../../core/contract/index.js').Problem} Problem */

/** @type {(error: ApiError) => void} */
let onUnauthorized = () => {};

/** @param {(error: ApiError) => void} handler called on every 401 (the session is over) */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string | null | undefined} token */
export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  /** A 401: the token is no longer good, the page signs out. */
  signedOut = false;

  /**
   * @param {number} status
   * @param {Partial<Problem> | undefined} problem
   */
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.title = problem?.title ?? statusTitle(status);
    this.detail = problem?.detail ?? this.message;
    this.errors = problem?.errors;
  }
}

/** @type {Record<number, string>} */
const TITLES = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
};

/** @param {number} status */
function statusTitle(status) {
  return TITLES[status] ?? 'Error';
}

/**
 * @param {'GET' | 'POST' | 'DELETE'} method
 * @param {string} path under /api/v1
 * @param {{ body?: unknown, headers?: Record<string, string>, signal?: AbortSignal | undefined, accept?: string }} [options]
 * @returns {Promise<Response>} a 2xx response; an ApiError otherwise
 */
async function send(method, path, { body, headers = {}, signal, accept = 'application/json' } = {}) {
  const token = getToken();
  /** @type {Record<string, string>} */
  const sent = { Accept: accept, ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  /** @type {RequestInit} */
  const init = { method, credentials: 'omit', cache: 'no-store', headers: sent };
  if (signal) init.signal = signal;
  if (body !== undefined) {
    sent['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(BASE + path, init);
  if (response.ok) return response;
  let problem;
  try {
    problem = await response.json();
  } catch {
    problem = undefined;
  }
  const error = new ApiError(response.status, problem);
  if (response.status === 401) {
    error.signedOut = true;
    onUnauthorized(error);
  }
  throw error;
}

/**
 * @param {string} path
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>} the answer (its type: the contract's `AnswerOf<route name>`)
 */
export async function get(path, signal) {
  return (await send('GET', path, { signal })).json();
}

/**
 * @param {string} path
 * @param {unknown} [body]
 * @param {Record<string, string>} [headers]
 * @returns {Promise<any>}
 */
export async function post(path, body = {}, headers = {}) {
  return (await send('POST', path, { body, headers })).json();
}

/**
 * @param {string} path
 * @returns {Promise<any>}
 */
export async function del(path) {
  return (await send('DELETE', path)).json();
}

/**
 * Saves an answer as a file named `filename` (an export): fetched with the
 * token (a plain link could not send it), handed to the browser as a download.
 *
 * @param {string} path
 * @param {string} filename
 */
export async function download(path, filename) {
  const blob = await (await send('GET', path, { accept: '*/*' })).blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has been handled: revoking at once may cancel the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Reads a text/event-stream answer and calls onEvent(name, data) per event
 * (data parsed as JSON when it is JSON), with the contract's reader (bounded
 * as the CLI's). Resolves when the stream ends.
 *
 * @param {string} path
 * @param {(name: string, data: any) => void} onEvent
 * @param {AbortSignal} signal
 */
export async function stream(path, onEvent, signal) {
  const response = await send('GET', path, { signal, accept: 'text/event-stream' });
  if (!response.body) throw new Error('the browser did not give a streaming body');
  for await (const { event, data } of serverEvents(textChunks(response.body))) {
    /** @type {unknown} */
    let parsed = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // plain text data
    }
    onEvent(event, parsed);
  }
}
