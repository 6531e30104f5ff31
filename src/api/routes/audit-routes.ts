// /api/v1/audit: the audit log, filtered and paginated, details redacted.
import { queryAudit } from '../../core/access/index.js';
import { routes } from '../../core/contract/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';

export function registerAuditRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(routes.audit, async ({ query }) => {
    const page = await queryAudit(core.redis, core.keys, withoutUndefined(query));
    // Details redacted again as read (entries written before redaction covered them);
    // actors (`token:<name>`) are names, not secrets.
    return { ...page, items: page.items.map((entry) => ({ ...entry, detail: redactDeep(entry.detail) })) };
  });
}
