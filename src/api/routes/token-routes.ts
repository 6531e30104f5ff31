// /api/v1/tokens (admin: create, list, revoke) and /api/v1/me (any token: itself).
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerTokenRoutes({ route }: RouteKit, { tokens }: ApiDeps) {
  route(routes.listTokens, () => tokens.list());
  route(routes.createToken, ({ body, actor }) =>
    tokens.create(body.name, body.role, actor, withoutUndefined({ expiresInMs: body.expiresInMs })),
  );
  // By id or name (the store's lookup): the removed token's view, so a client needs no list first.
  route(routes.revokeToken, async ({ params, actor }) => ({
    ...(await tokens.revoke(params.id, actor)),
    revoked: true,
  }));
  route(routes.me, (_input, request) => {
    const { id, name, role, expiresAt } = request.token!;
    return { id, name, role, ...(expiresAt ? { expiresAt } : {}) };
  });
}
