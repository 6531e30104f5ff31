// /api/v1/tokens (admin: create, list, revoke), /api/v1/me (any token: itself)
// and /api/v1/teams (the tokens' teams and their weights in the fair share).
import { listTeams, setTeamWeight } from '../../core/access/index.js';
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerTokenRoutes({ route }: RouteKit, { tokens }: ApiDeps) {
  route(routes.listTokens, () => tokens.list());
  route(routes.createToken, ({ body, actor }) =>
    tokens.create(
      body.name,
      body.role,
      actor,
      withoutUndefined({ expiresInMs: body.expiresInMs, team: body.team }),
    ),
  );
  // By id or name (the store's lookup): the removed token's view, so a client needs no list first.
  route(routes.revokeToken, async ({ params, actor }) => ({
    ...(await tokens.revoke(params.id, actor)),
    revoked: true,
  }));
  route(routes.listTeams, () => listTeams(tokens.redis, tokens.keys));
  route(routes.setTeam, ({ params, body, actor }) =>
    setTeamWeight(tokens.redis, tokens.keys, params.team, body.weight, actor),
  );
  route(routes.me, (_input, request) => {
    const { id, name, role, expiresAt } = request.token!;
    return { id, name, role, ...(expiresAt ? { expiresAt } : {}) };
  });
}
