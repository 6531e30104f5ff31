// /api/v1/operations: queue durable operations (idempotent with an
// Idempotency-Key), read them, their stderr, cancel them, follow their states.
import { routes } from '../../core/contract/index.js';
import { isTerminal } from '../../core/work/operations/index.js';
import { InvalidInputError, withoutUndefined } from '../../core/platform/index.js';
import { ROLLOUT_KEY_PREFIX } from '../../core/work/rollouts/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import { stream } from '../sse.js';
import { STREAM_LIMIT_ERRORS } from '../stream-limits.js';

export function registerOperationRoutes({ route }: RouteKit, { runtime, streams }: ApiDeps) {
  const { operations } = runtime;
  route(
    routes.createOperation,
    async ({ body, actor }, request, reply) => {
      const key = request.headers['idempotency-key'];
      // `rollout:<rollout>:<project>` names the operation a rollout adopts for a project: a key a
      // client chose could make that operation beforehand (another input, its requester's grants).
      if (typeof key === 'string' && key.startsWith(ROLLOUT_KEY_PREFIX))
        throw new InvalidInputError(
          `the Idempotency-Key header may not start with ${JSON.stringify(ROLLOUT_KEY_PREFIX)}: those keys are the rollouts' own; choose another key`,
        );
      const { operation, created } = await operations.create(
        {
          pluginId: body.pluginId,
          projectId: body.projectId,
          action: body.action,
          input: (body.input ?? {}) as never,
          ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
          ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
        },
        actor,
      );
      return reply.code(created ? 202 : 200).send(operation);
    },
    { raw: true },
  );
  route(routes.listOperations, ({ query }) => operations.list(withoutUndefined(query)));
  route(routes.resolveOperation, async ({ query }) => ({
    id: await operations.resolve(
      query.ref,
      withoutUndefined({ pluginId: query.pluginId, projectId: query.projectId }),
    ),
  }));
  route(routes.getOperation, ({ params }) => operations.get(params.id));
  route(routes.operationLogs, ({ params }) => operations.logs(params.id));
  route(routes.cancelOperation, ({ params, actor }) => operations.cancel(params.id, actor));
  route(
    routes.operationEvents,
    ({ params }, request, reply) =>
      streams.hold(request, async () => {
        await operations.get(params.id);
        await stream(request, reply, async (send, signal) => {
          const final = await operations.follow(params.id, (operation) => send('state', operation), {
            signal,
          });
          if (isTerminal(final.state)) send('done', final);
        });
      }),
    { raw: true, errors: STREAM_LIMIT_ERRORS },
  );
}
