// /api/v1/operations: queue durable operations (idempotent with an
// Idempotency-Key), read them, their stderr, cancel them, follow their states.
import { z } from 'zod';
import { isTerminal } from '../../core/work/operations/index.js';
import { withoutUndefined, type ApiDeps, type RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { bodies, operationsQuery } from '../schemas.js';
import { stream } from '../sse.js';
import { STREAM_LIMIT_ERRORS } from '../stream-limits.js';

export function registerOperationRoutes(
  { route, body, query, param, actorOf }: RouteKit,
  { runtime, streams }: ApiDeps,
) {
  const { operations } = runtime;
  route(
    'POST',
    '/operations',
    'operator',
    'queue one durable operation',
    async (request, reply) => {
      const input = body(bodies.createOperation, request);
      const key = request.headers['idempotency-key'];
      const { operation, created } = await operations.create(
        {
          pluginId: input.pluginId,
          projectId: input.projectId,
          action: input.action,
          input: (input.input ?? {}) as never,
          ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
          ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
        },
        actorOf(request),
      );
      return reply.code(created ? 202 : 200).send(operation);
    },
    {
      body: bodies.createOperation,
      status: 202,
      alsoStatus: 200,
      raw: true,
      response: responses.operationView,
    },
  );
  route(
    'GET',
    '/operations',
    'viewer',
    'newest operations, filtered (projectId, pluginId, state), paginated',
    async (request) => operations.list(withoutUndefined(query(operationsQuery, request))),
    { response: responses.page(responses.operationView) },
  );
  route(
    'GET',
    '/operations/:id',
    'viewer',
    'one operation',
    (request) => operations.get(param(request, 'id')),
    { response: responses.operationView },
  );
  route(
    'GET',
    '/operations/:id/logs',
    'viewer',
    "the operation's redacted stderr so far, oldest first (written while its call runs)",
    (request) => operations.logs(param(request, 'id')),
    { response: z.array(responses.logEntry) },
  );
  route(
    'POST',
    '/operations/:id/cancel',
    'operator',
    'cancel an operation',
    async (request) => {
      body(bodies.empty, request);
      return operations.cancel(param(request, 'id'), actorOf(request));
    },
    { body: bodies.empty, response: responses.operationView },
  );
  route(
    'GET',
    '/operations/:id/events',
    'viewer',
    'state changes (Server-Sent Events)',
    (request, reply) =>
      streams.hold(request, async () => {
        const id = param(request, 'id');
        await operations.get(id);
        await stream(request, reply, async (send, signal) => {
          const final = await operations.follow(id, (operation) => send('state', operation), { signal });
          if (isTerminal(final.state)) send('done', final);
        });
      }),
    { raw: true, errors: STREAM_LIMIT_ERRORS },
  );
}
