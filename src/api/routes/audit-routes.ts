// /api/v1/audit: the audit log, filtered and paginated, details redacted for the token's role.
import { routes } from '../../core/contract/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';

export function registerAuditRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  route(routes.audit, ({ query }, request) =>
    runtime.audit.query(withoutUndefined(query), { role: request.token?.role }),
  );
}
