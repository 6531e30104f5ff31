// /api/v1/plugins: review, trust, grants, health, call policy and logs.
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS } from '@switchyard/plugin-sdk/protocol';
import { routes } from '../../core/contract/index.js';
import {
  countFactValues,
  fleetOrder,
  fleetPosition,
  type FleetPosition,
  type FleetRow,
} from '../../core/work/batches/index.js';
import { decodeCursor } from '../../core/redis/index.js';
import { redactDeep } from '../../core/safety/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerPluginRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route(routes.listPlugins, () => core.plugins.list());
  route(routes.showPlugin, async ({ params }) => ({
    ...(await core.plugins.show(params.id)),
    osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT,
    scopeDescriptions: SCOPE_DESCRIPTIONS,
  }));
  route(routes.refreshPlugins, ({ actor }) => core.plugins.refresh(actor));
  route(routes.trustPlugin, ({ params, body, actor }) =>
    core.plugins.trust(params.id, body.fingerprint, actor),
  );
  route(routes.enablePlugin, ({ params, body, actor }) => core.plugins.enable(params.id, body.scopes, actor));
  route(routes.disablePlugin, ({ params, actor }) => core.plugins.disable(params.id, actor));
  route(routes.checkPluginHealth, ({ params }) => core.plugins.health(params.id));
  route(routes.setPluginLimits, ({ params, body, actor }) =>
    core.plugins.setPolicy(params.id, withoutUndefined(body), actor),
  );
  // Redacted again as they are read: entries stored before a pattern existed, and
  // tokens this api knows (registered as it verified them), never reach a viewer.
  route(routes.pluginLogs, async ({ params, query }) =>
    redactDeep(await core.plugins.logs(params.id, query.limit ?? 100)),
  );
  // The fleet: stored redacted as recorded, redacted again as read (patterns added since).
  route(routes.pluginFacts, async ({ params, query, signal }) => {
    const { sort } = query;
    // Unsorted, the cursor is the last project id (as before); sorted, the last row's position.
    const page =
      sort === undefined
        ? await byProjectPage(runtime, params.id, query, signal)
        : sortedPage(
            await runtime.batches.fleet(params.id, {
              ...fleetFilters(query, signal),
              facts: [...(query.fact ?? []), sort],
            }),
            sort,
            query,
          );
    return { ...page, items: redactDeep(page.items) };
  });
  route(routes.pluginTrend, async ({ params, query }) =>
    redactDeep(await runtime.batches.trend(params.id, query.batches ?? 10, query.fact)),
  );
  route(routes.pluginFactCounts, async ({ params, query, signal }) => {
    const { fact, ...filters } = query;
    const rows = await runtime.batches.fleet(params.id, { ...fleetFilters(filters, signal), facts: [fact] });
    return { fact: query.fact, total: rows.length, counts: redactDeep(countFactValues(rows, query.fact)) };
  });
}

function fleetFilters(query: FleetFilterQuery, signal: AbortSignal) {
  return { where: query.where, facts: query.fact, labels: query.label, signal };
}

/** The fleet filters of a validated query: those not given are `undefined`. */
interface FleetFilterQuery {
  where?: string[] | undefined;
  label?: string[] | undefined;
  fact?: string[] | undefined;
}

interface FleetPageQuery {
  cursor?: string | undefined;
  limit?: number | undefined;
  order?: 'asc' | 'desc' | undefined;
}

/** A page by project id costs the page (the core reads the fleet index), not the whole fleet. */
async function byProjectPage(
  runtime: ApiDeps['runtime'],
  pluginId: string,
  query: FleetPageQuery & FleetFilterQuery,
  signal: AbortSignal,
) {
  const after = query.cursor ? Buffer.from(query.cursor, 'base64url').toString('utf8') : undefined;
  const { items, more } = await runtime.batches.fleetPage(pluginId, {
    ...fleetFilters(query, signal),
    after,
    limit: query.limit ?? DEFAULT_PAGE,
  });
  return {
    items,
    ...(more ? { nextCursor: Buffer.from(items.at(-1)!.projectId).toString('base64url') } : {}),
  };
}

function sortedPage(rows: FleetRow[], fact: string, query: FleetPageQuery) {
  const order = fleetOrder(fact, query.order === 'desc');
  const sorted = rows
    .map((row) => ({ row, position: fleetPosition(row, fact) }))
    .sort((a, b) => order(a.position, b.position));
  const after = query.cursor ? decodeCursor(query.cursor, isFleetPosition) : undefined;
  const start = after === undefined ? 0 : sorted.findIndex(({ position }) => order(position, after) > 0);
  return pageFrom(
    sorted.map(({ row }) => row),
    start,
    query.limit,
    (row) => JSON.stringify(fleetPosition(row, fact)),
  );
}

const DEFAULT_PAGE = 100;

function pageFrom(
  rows: FleetRow[],
  start: number,
  limit = DEFAULT_PAGE,
  cursorOf: (row: FleetRow) => string,
) {
  const items = start < 0 ? [] : rows.slice(start, start + limit);
  const more = start >= 0 && start + limit < rows.length;
  return {
    items,
    ...(more ? { nextCursor: Buffer.from(cursorOf(items.at(-1)!)).toString('base64url') } : {}),
  };
}

function isFleetPosition(value: unknown): value is FleetPosition {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (value[0] === null || typeof value[0] === 'string') &&
    typeof value[1] === 'string'
  );
}
