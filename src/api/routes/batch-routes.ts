// /api/v1/batches: start and read batch inspections, follow their progress
// (Server-Sent Events), and batch control: cancel, retry, the previous batch,
// diff and export.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { routes } from '../../core/contract/index.js';
import { withoutResults } from '../../core/work/batches/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import { JsonText, stream } from '../sse.js';
import { STREAM_LIMIT_ERRORS } from '../stream-limits.js';

export function registerBatchRoutes({ route }: RouteKit, { runtime, streams }: ApiDeps) {
  const { batches } = runtime;
  route(routes.createBatch, ({ body, actor }, request) =>
    batches.create(body.pluginId, body.projects, actor, {
      ...(body.priority ? { priority: body.priority } : {}),
      ...(request.token ? { role: request.token.role } : {}),
    }),
  );
  route(routes.listBatches, async ({ query }) => {
    const page = await batches.list(withoutUndefined(query));
    return { ...page, items: page.items.map(withoutResults) };
  });
  route(routes.resolveBatch, async ({ query }) => ({
    id: await batches.resolve(query.ref, withoutUndefined({ pluginId: query.pluginId })),
  }));
  // A batch's results may be a MiB each: both answers are streamed as read, never built whole per reader.
  route(
    routes.getBatch,
    async ({ params }, _request, reply) => {
      sendJsonText(reply, await batches.textWithResults(params.id));
    },
    { raw: true },
  );
  route(
    routes.batchResults,
    async ({ params, query }, _request, reply) => {
      sendJsonText(reply, await batches.results(params.id, withoutUndefined(query)));
    },
    { raw: true },
  );
  route(
    routes.batchEvents,
    ({ params }, request, reply) =>
      streams.hold(request, async () => {
        await batches.get(params.id, { results: false });
        await stream(request, reply, async (send, signal, drained) => {
          // `done` carries the counts, not the results (GET /batches/:id has them): 16 followers of a
          // batch of 1 MiB results would otherwise each read and send the whole batch at its end.
          const finished = await batches.follow(params.id, (batch) => send('progress', batch), {
            signal,
            results: false,
            // Each event waits until the client took most of the last: the api holds ~1 MiB per stream.
            onOutcomeTexts: async (texts) => {
              await drained();
              send('outcomes', new JsonText(`[${texts.join(',')}]`));
            },
          });
          if (!signal.aborted) send('done', withoutResults(finished));
        });
      }),
    { raw: true, errors: STREAM_LIMIT_ERRORS },
  );

  // ---- batch control: cancel, retry, diff, export ----
  route(routes.cancelBatch, async ({ params, actor }) =>
    withoutResults(await batches.cancel(params.id, actor)),
  );
  route(routes.retryBatch, ({ params, body, actor }) =>
    batches.retry(params.id, { failedOnly: body.failedOnly === true }, actor),
  );
  route(routes.previousBatch, async ({ params }) => {
    const previous = await batches.previous(params.id);
    return { previous: previous ? withoutResults(previous) : null };
  });
  route(routes.diffBatches, ({ params, query }) => batches.diff(query.from, params.id));
  route(
    routes.exportBatch,
    async ({ params, query }, _request, reply) => {
      const chunks = await batches.export(params.id, query.format);
      // Not returned: a reply settles when its body ends, and the time budget covers only the handler.
      reply
        .type(query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(Readable.from(chunks));
    },
    { raw: true },
  );
}

/** A JSON document sent as its pieces come, read only as fast as the client takes them. */
function sendJsonText(reply: FastifyReply, pieces: AsyncIterable<string>): void {
  reply.type('application/json; charset=utf-8').send(Readable.from(pieces));
}
