// /api/v1/audit: the audit log, filtered and paginated, details redacted.
import { queryAudit } from '../../core/access/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { auditQuery } from '../schemas.js';

export function registerAuditRoutes({ route, query }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(
    'GET',
    '/audit',
    'viewer',
    'newest audit entries, filtered (actor, action prefix, excludeAction prefix, target, since), paginated',
    async (request) => {
      const { since, ...filters } = query(auditQuery, request);
      const page = await queryAudit(core.redis, core.keys, {
        ...withoutUndefined(filters),
        ...(since !== undefined ? { withinMs: since } : {}),
      });
      // Details redacted again as read (entries written before redaction covered them);
      // actors (`token:<name>`) are names, not secrets.
      return { ...page, items: page.items.map((entry) => ({ ...entry, detail: redactDeep(entry.detail) })) };
    },
    { response: responses.page(responses.auditEntry) },
  );
}
