// The API client: bearer token from sessionStorage, problem+json errors,
// Server-Sent Events read with fetch() (EventSource cannot send Authorization)
// and the contract's reader (server-events.js, bundled from src/core/contract at build).

import { serverEvents, textChunks } from './server-events.js';

const TOKEN_KEY = 'switchyard.token';
const BASE = '/api/v1';

let onUnauthorized = () => {};

export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.title = problem?.title ?? statusTitle(status);
    this.detail = problem?.detail ?? this.message;
    this.errors = problem?.errors;
  }
}

function statusTitle(status) {
  return (
    { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' }[
      status
    ] ?? 'Error'
  );
}

async function send(method, path, { body, headers = {}, signal, accept = 'application/json' } = {}) {
  const token = getToken();
  const init = {
    method,
    signal,
    credentials: 'omit',
    cache: 'no-store',
    headers: { Accept: accept, ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
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

export async function get(path, signal) {
  return (await send('GET', path, { signal })).json();
}

export async function post(path, body = {}, headers = {}) {
  return (await send('POST', path, { body, headers })).json();
}

export async function del(path) {
  return (await send('DELETE', path)).json();
}

/**
 * Reads a text/event-stream answer and calls onEvent(name, data) per event
 * (data parsed as JSON when it is JSON), with the contract's reader (bounded
 * as the CLI's). Resolves when the stream ends.
 */
export async function stream(path, onEvent, signal) {
  const response = await send('GET', path, { signal, accept: 'text/event-stream' });
  if (!response.body) throw new Error('the browser did not give a streaming body');
  for await (const { event, data } of serverEvents(textChunks(response.body))) {
    let parsed = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // plain text data
    }
    onEvent(event, parsed);
  }
}
