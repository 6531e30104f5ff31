// The audit log as every front reads it (the api's /audit, the CLI's `audit`):
// filtered, one page, details redacted again as read and, for a viewer who is
// not an admin, webhook URLs with their query values redacted.
import type { Redis } from 'ioredis';
import type { Keys, Page } from '../redis/index.js';
import { redactDeep, webhookUrlForViewer } from '../safety/index.js';
import { queryAudit, type AuditEntry, type AuditQuery } from './audit.js';
import { roleAllows, type Role } from './tokens.js';

/** Who reads the audit: admins see webhook URLs whole (they may read /webhooks), the others redacted. */
export interface AuditViewer {
  /** None: an unknown reader, shown what a viewer is. */
  role: Role | undefined;
}

/** The audit log as every front reads it: filtered, one page, details redacted for the viewer. */
export class AuditService {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async query(query: AuditQuery, viewer: AuditViewer): Promise<Page<AuditEntry>> {
    const page = await queryAudit(this.redis, this.keys, query);
    const admin = viewer.role !== undefined && roleAllows(viewer.role, 'admin');
    // Details redacted again as read (entries written before redaction covered them);
    // actors (`token:<name>`) are names, not secrets.
    return {
      ...page,
      items: page.items.map((entry) => {
        const detail = redactDeep(entry.detail);
        return { ...entry, detail: admin ? detail : withWebhookUrlForViewer(entry, detail) };
      }),
    };
  }
}

/**
 * A webhook's URL can hold its receiver's key (`?key=…`); only admins may read
 * webhooks (/webhooks), so the others read it with its query values redacted.
 */
function withWebhookUrlForViewer(entry: AuditEntry, detail: AuditEntry['detail']): AuditEntry['detail'] {
  if (!entry.action.startsWith('webhook.') || typeof detail.url !== 'string') return detail;
  return { ...detail, url: webhookUrlForViewer(detail.url) };
}
