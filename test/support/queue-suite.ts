// The set-up every queue fault test file shares: an owned Redis for the file,
// a fresh installation per test (closed after it, with every worker and
// scheduler it started SIGKILLed), and the file's section of the report.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startOwnedRedis, type OwnedRedis, type OwnedRedisOptions } from './redis.js';
import { Report, createInstallation, killAllSpawned, type Installation } from './workers.js';

export interface QueueSuite {
  /** The file's owned Redis (started in beforeAll). */
  readonly redis: OwnedRedis;
  readonly report: Report;
  /** A fresh installation on the suite's Redis; closed after the test. */
  install(name: string): Promise<Installation>;
}

/** Registers the hooks; call once at the top of a test file. */
export function useQueueSuite(section: string, redisOptions?: OwnedRedisOptions): QueueSuite {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  const report = new Report(section);

  beforeAll(async () => {
    redis = await startOwnedRedis(redisOptions);
  });

  afterEach(async () => {
    await killAllSpawned();
    await installation?.close();
    installation = undefined;
  });

  afterAll(async () => {
    await report.write();
    await redis?.stop();
  });

  const owned = (): OwnedRedis => {
    if (!redis) throw new Error('the owned Redis is not started yet');
    return redis;
  };

  return {
    get redis() {
      return owned();
    },
    report,
    async install(name) {
      installation = await createInstallation(owned().url, name);
      return installation;
    },
  };
}
