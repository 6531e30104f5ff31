// /api/v1/audit: the audit log, filtered and paginated, details redacted.
import { roleAllows, queryAudit, type AuditEntry } from '../../core/access/index.js';
import { routes } from '../../core/contract/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { webhookUrlForViewer } from '../../core/work/notify/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerAuditRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(routes.audit, async ({ query }, request) => {
    const page = await queryAudit(core.redis, core.keys, withoutUndefined(query));
    const admin = request.token !== undefined && roleAllows(request.token.role, 'admin');
    // Details redacted again as read (entries written before redaction covered them);
    // actors (`token:<name>`) are names, not secrets.
    return {
      ...page,
      items: page.items.map((entry) => {
        const detail = redactDeep(entry.detail);
        return { ...entry, detail: admin ? detail : withWebhookUrlForViewer(entry, detail) };
      }),
    };
  });
}

/**
 * A webhook's URL can hold its receiver's key (`?key=…`); only admins may read
 * webhooks (/webhooks), so the others read it with its query values redacted.
 */
function withWebhookUrlForViewer(entry: AuditEntry, detail: AuditEntry['detail']): AuditEntry['detail'] {
  if (!entry.action.startsWith('webhook.') || typeof detail.url !== 'string') return detail;
  return { ...detail, url: webhookUrlForViewer(detail.url) };
}
