// /api/v1/batches: start and read batch inspections, follow their progress
// (Server-Sent Events), and batch control: cancel, retry, the
// previous batch, diff and export.
import { Readable } from 'node:stream';
import { withoutResults } from '../../core/work/batches/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { batchesQuery, bodies, diffQuery, exportQuery } from '../schemas.js';
import { stream } from '../sse.js';
import { STREAM_LIMIT_ERRORS } from '../stream-limits.js';

export function registerBatchRoutes(
  { route, body, query, param, actorOf }: RouteKit,
  { runtime, streams }: ApiDeps,
) {
  const { batches } = runtime;
  route(
    'POST',
    '/batches',
    'operator',
    'start a batch inspection',
    async (request) => {
      const input = body(bodies.createBatch, request);
      return batches.create(input.pluginId, input.projects, actorOf(request));
    },
    { body: bodies.createBatch, status: 202, response: responses.batchView },
  );
  route(
    'GET',
    '/batches',
    'viewer',
    'newest batches, filtered (state, pluginId), paginated',
    async (request) => {
      const page = await batches.list(query(batchesQuery, request));
      return { ...page, items: page.items.map(withoutResults) };
    },
    { response: responses.page(responses.batchSummary) },
  );
  route(
    'GET',
    '/batches/:id',
    'viewer',
    'a batch with its results',
    (request) => batches.get(param(request, 'id')),
    { response: responses.batchView },
  );
  route(
    'GET',
    '/batches/:id/events',
    'viewer',
    'live progress (Server-Sent Events)',
    (request, reply) =>
      streams.hold(request, async () => {
        const id = param(request, 'id');
        await batches.get(id, { results: false });
        await stream(request, reply, async (send, signal) => {
          const finished = await batches.follow(id, (batch) => send('progress', batch), {
            signal,
            onOutcomes: (outcomes) => send('outcomes', outcomes),
          });
          if (!signal.aborted) send('done', finished);
        });
      }),
    { raw: true, errors: STREAM_LIMIT_ERRORS },
  );

  // ---- batch control: cancel, retry, diff, export ----
  route(
    'POST',
    '/batches/:id/cancel',
    'operator',
    'cancel a batch: queued inspections never start, running ones are killed (idempotent)',
    async (request) => {
      body(bodies.empty, request);
      return withoutResults(await batches.cancel(param(request, 'id'), actorOf(request)));
    },
    { body: bodies.empty, response: responses.batchSummary },
  );
  route(
    'POST',
    '/batches/:id/retry',
    'operator',
    'a new batch over the same plugin and projects ({failedOnly: true}: only failed and cancelled ones)',
    async (request) => {
      const input = body(bodies.retryBatch, request);
      return batches.retry(param(request, 'id'), { failedOnly: input.failedOnly === true }, actorOf(request));
    },
    { body: bodies.retryBatch, status: 202, response: responses.batchView },
  );
  route(
    'GET',
    '/batches/:id/previous',
    'viewer',
    'the newest earlier batch of the same plugin: {previous: batch | null}',
    async (request) => {
      const previous = await batches.previous(param(request, 'id'));
      return { previous: previous ? withoutResults(previous) : null };
    },
    { response: responses.previousBatch },
  );
  route(
    'GET',
    '/batches/:id/diff',
    'viewer',
    'what changed from batch ?from=<id> to this one (facts added/removed/changed, status)',
    async (request) => batches.diff(query(diffQuery, request).from, param(request, 'id')),
    { response: responses.batchDiff },
  );
  route(
    'GET',
    '/batches/:id/export',
    'viewer',
    'the results, streamed: ?format=jsonl (one line per project) or csv (one row per fact)',
    async (request, reply) => {
      const { format } = query(exportQuery, request);
      const chunks = await batches.export(param(request, 'id'), format);
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(Readable.from(chunks));
    },
    { raw: true, streams: ['application/x-ndjson', 'text/csv'] },
  );
}
