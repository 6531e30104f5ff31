// Every /api/v1 route needs a bearer token whose role allows the route's role;
// the token found is kept on the request (its name is the audit actor).
import type { FastifyRequest } from 'fastify';
import { roleAllows, type Role, type TokenStore } from '../core/access/index.js';
import { ERROR_CODES } from '../core/platform/index.js';
import { ProblemError } from './problems.js';
import type { Authenticate } from './route-kit.js';

// Problem details pass through the redactor (problems.ts), which takes
// `token: …`, `Authorization: …`, `Bearer x` and `<token>…` for secrets; these
// fixed hints are worded so that none of those shapes occur and they arrive whole.
const NO_TOKEN_DETAIL =
  'no bearer token was sent; send the header "Authorization" with the value "Bearer", a space and your token ' +
  '(the first admin token is in the file <data-dir>/api-token)';
const UNKNOWN_TOKEN_DETAIL =
  'unknown or revoked token; check that the whole token was sent, or ask an admin for a new one';

/** The token of the request's `Authorization: Bearer …` header, if it has one. */
function bearerToken(request: FastifyRequest): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
}

/**
 * Checks the request's bearer token against `needed`: a 401 or 403 problem
 * otherwise; answers the audit actor, `token:<name>`.
 */
export function authenticator(tokens: TokenStore): Authenticate {
  return async (request: FastifyRequest, needed: Role): Promise<string> => {
    const presented = bearerToken(request);
    if (presented === undefined) throw ProblemError.of(ERROR_CODES.UNAUTHENTICATED, NO_TOKEN_DETAIL);
    const check = await tokens.check(presented);
    if (!check.ok && check.reason === 'expired')
      throw ProblemError.of(
        ERROR_CODES.TOKEN_EXPIRED,
        `token ${check.token.name} expired at ${check.token.expiresAt}; ask an admin for a new one`,
      );
    if (!check.ok) throw ProblemError.of(ERROR_CODES.UNAUTHENTICATED, UNKNOWN_TOKEN_DETAIL);
    const token = check.token;
    if (!roleAllows(token.role, needed)) {
      throw ProblemError.of(
        ERROR_CODES.FORBIDDEN,
        `this needs the ${needed} role; token ${token.name} has ${token.role}`,
        { requiredRole: needed },
      );
    }
    request.token = token;
    return `token:${token.name}`;
  };
}

/**
 * Whether the token that opened a long answer (an event stream) is still
 * valid: not revoked, not expired. Its role cannot change, so the route's
 * role check stands. Like any use, it records the token's last use (at most
 * one write a minute).
 */
export function tokenStillValid(tokens: TokenStore) {
  return async (request: FastifyRequest): Promise<boolean> => {
    const presented = bearerToken(request);
    return presented !== undefined && (await tokens.check(presented)).ok;
  };
}
