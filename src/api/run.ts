// `switchyard api`: the front process.
import { processIdentity } from '../core/context.js';
import { createLogger } from '../core/log.js';
import { createRuntime } from '../core/runtime.js';
import { buildApi, type ApiOptions } from './server.js';

export async function runApiProcess(config: {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  logLevel?: string;
  api: ApiOptions;
}): Promise<void> {
  const logger = createLogger('api', config.logLevel);
  const runtime = await createRuntime({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    processActor: processIdentity('api'),
  });
  const app = await buildApi(runtime);
  const address = await app.listen({ host: config.api.host, port: config.api.port });
  logger.info({ event: 'listening', address }, 'listening');
  await new Promise<void>((resolve) => {
    const stop = () =>
      void app
        .close()
        .then(() => runtime.close())
        .finally(resolve);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
