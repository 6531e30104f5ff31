// `switchyard api`: the front process. Binds 127.0.0.1 unless told otherwise,
// and refuses a non-loopback address without TLS or an explicit
// --insecure-http. The first start writes an admin token to <data-dir>/api-token.
import { readFile, writeFile, chmod, mkdir } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { InvalidInputError, createLogger } from '../core/platform/index.js';
import { runProcess } from '../core/runtime/index.js';
import { redact } from '../core/safety/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { allowedHostNames } from './host-allowlist.js';
import { buildApi } from './server.js';

export interface ApiOptions {
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp?: boolean;
  /** Names /healthz and /metrics answer for besides IP literals, loopback names and --host. */
  allowedHosts?: string[];
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}

export async function runApiProcess(config: {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  logLevel?: string;
  api: ApiOptions;
}): Promise<void> {
  const logger = createLogger('api', config.logLevel);
  const tls = config.api.tlsCert && config.api.tlsKey;
  if ((config.api.tlsCert === undefined) !== (config.api.tlsKey === undefined)) {
    throw new InvalidInputError('--tls-cert and --tls-key go together');
  }
  if (!isLoopback(config.api.host) && !tls) {
    if (!config.api.insecureHttp) {
      throw new InvalidInputError(
        `refusing to serve plain HTTP on ${config.api.host}: tokens would cross the network in clear text; give --tls-cert and --tls-key, or --insecure-http if a TLS proxy fronts this`,
      );
    }
    logger.warn(
      { event: 'insecure-http', host: config.api.host },
      'serving plain HTTP on a non-loopback address',
    );
  }
  await runProcess(
    'api',
    config,
    { deadlineMs: 10_000, logger, runtime: { answersRequests: true } },
    async (runtime) => {
      // BullMQ re-emits every failed reconnect; without a listener it prints each
      // stack. One line per 10 s says it instead (requests answer 503 meanwhile).
      let warnedAt = 0;
      const { inspect, operate, health, maintenance, notify } = runtime.queues;
      for (const queue of [inspect, operate, health, maintenance, notify]) {
        queue.on('error', (error: Error) => {
          if (Date.now() - warnedAt < 10_000) return;
          warnedAt = Date.now();
          logger.warn(
            { event: 'redis-unreachable', error: redact(error.message) },
            'Redis cannot be reached',
          );
        });
      }
      await ensureFirstToken(runtime, config.dataDir, logger);
      const app = await buildApi(runtime, runtime.tokens, logger, {
        allowedHosts: allowedHostNames(config.api.host, config.api.allowedHosts),
        ...(tls
          ? { https: { cert: await readFile(config.api.tlsCert!), key: await readFile(config.api.tlsKey!) } }
          : {}),
      });
      let address: string;
      try {
        address = await app.listen({ host: config.api.host, port: config.api.port });
      } catch (error) {
        // runProcess closes the runtime when the start fails.
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') {
          throw new InvalidInputError(
            `${config.api.host}:${config.api.port} is already in use; choose another --port`,
          );
        }
        throw error;
      }
      logger.info({ event: 'listening', address }, `listening on ${address}`);
      // `up` waits for this (not for whoever answers /healthz on the port) before it says it is up.
      const bound = app.server.address();
      return {
        ready: { address, port: typeof bound === 'object' && bound ? bound.port : config.api.port },
        stop: () => app.close(),
      };
    },
  );
}

/** With no token at all, create an admin token and write it to <data-dir>/api-token (0600). */
async function ensureFirstToken(
  { tokens, identity }: Runtime,
  dataDir: string,
  logger: ReturnType<typeof createLogger>,
) {
  if ((await tokens.count()) > 0) return;
  const created = await tokens.create('initial-admin', 'admin', identity);
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'api-token');
  await writeFile(path, `${created.token}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  logger.info({ event: 'token-written', path }, `wrote the first admin token to ${path}`);
}
