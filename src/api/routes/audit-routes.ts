// /api/v1/audit: the audit log, filtered and paginated, details redacted for the token's role;
// /api/v1/queue: what waits and runs.
import { routes } from '../../core/contract/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerAuditRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  // What waits and runs (queue-view.ts); a wait's reason redacted like every text shown to a viewer.
  route(routes.queue, async () => redactDeep(await runtime.queue.view()));
  route(routes.audit, ({ query }, request) =>
    runtime.audit.query(withoutUndefined(query), { role: request.token?.role }),
  );
}
