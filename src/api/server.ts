// The api process: HTTP on 127.0.0.1 by default. /healthz answers 200 once
// Redis, the api, the workers and the scheduler are all up.
import Fastify, { type FastifyInstance } from 'fastify';
import { liveness } from '../core/liveness.js';
import type { Runtime } from '../core/runtime.js';

export interface ApiOptions {
  host: string;
  port: number;
}

export async function buildApi(runtime: Runtime): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
  app.get('/healthz', async (_request, reply) => {
    const state = await liveness(runtime.core.redis, runtime.core.keys, runtime.queues);
    return reply
      .code(state.ok ? 200 : 503)
      .send({ status: state.ok ? 'ok' : 'starting', api: true, ...state });
  });
  app.get('/', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><title>Switchyard</title><h1>Switchyard</h1><p>The review UI is not built yet; use the CLI.</p>',
      ),
  );
  return app;
}
