// /api/v1/tokens (admin: create, list, revoke) and /api/v1/me (any token: itself).
import { z } from 'zod';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { bodies } from '../schemas.js';

export function registerTokenRoutes({ route, body, param, actorOf }: RouteKit, { tokens }: ApiDeps) {
  route('GET', '/tokens', 'admin', 'list tokens (with expiry and last use)', () => tokens.list(), {
    response: z.array(responses.tokenView),
  });
  route(
    'POST',
    '/tokens',
    'admin',
    'create a token (its secret is shown once)',
    async (request) => {
      const input = body(bodies.createToken, request);
      return tokens.create(input.name, input.role, actorOf(request), {
        ...(input.expiresInMs !== undefined ? { expiresInMs: input.expiresInMs } : {}),
      });
    },
    { body: bodies.createToken, status: 201, response: responses.createdToken },
  );
  route(
    'DELETE',
    '/tokens/:id',
    'admin',
    'revoke a token',
    async (request) => {
      const revoked = await tokens.revoke(param(request, 'id'), actorOf(request));
      return { id: revoked.id, revoked: true };
    },
    { response: responses.revokedToken },
  );
  route(
    'GET',
    '/me',
    'viewer',
    'the token making this request: its name, role and expiry',
    async (request) => {
      const { id, name, role, expiresAt } = request.token!;
      return { id, name, role, ...(expiresAt ? { expiresAt } : {}) };
    },
    { response: responses.me },
  );
}
