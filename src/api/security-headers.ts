// The headers every answer carries (JSON, problems, UI files and event streams
// alike): the UI may load only its own files, nothing may frame it, nothing
// is cached. @fastify/helmet sets them (and its other defaults: COOP, CORP,
// Origin-Agent-Cluster, …) in an onRequest hook on the raw response, so a
// hijacked event stream keeps them too.
import type { FastifyHelmetOptions } from '@fastify/helmet';

const CSP_DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'connect-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
};

export const CSP = Object.entries(CSP_DIRECTIVES)
  .map(([name, values]) => `${name} ${values.join(' ')}`)
  .join('; ');

export const HELMET_OPTIONS: FastifyHelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  // Whether a host is reached over TLS end to end (and for its subdomains) is the deployment's call.
  strictTransportSecurity: false,
};

/** Not helmet's: answers (tokens' views, problems) are never stored by a cache. */
export const CACHE_HEADERS: Readonly<Record<string, string>> = { 'cache-control': 'no-store' };

/**
 * Answers Fastify gives before any hook runs (a URL the router cannot
 * decode) get the essential ones by hand: helmet has not seen the request.
 */
export const BEFORE_HOOKS_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  ...CACHE_HEADERS,
};
