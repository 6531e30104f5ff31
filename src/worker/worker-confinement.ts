// What this host gives plugin calls, checked before a worker takes any job and
// reported (for /healthz and `plugin show`) while it runs.
import { REPORT_EVERY_MS, reportConfinement, withdrawConfinement } from '../core/plugins/index.js';
import { ConfinementUnavailableError } from '../core/platform/index.js';
import { containment } from '../core/supervision/index.js';
import type { Runtime } from '../core/runtime/index.js';
import type { WorkerLog } from './worker-log.js';

/**
 * Refuses to start under --require-confinement unless every mechanism of kernel confinement
 * is in force here; otherwise reports what is, now and every REPORT_EVERY_MS.
 */
export async function confineAndReport(runtime: Runtime, log: WorkerLog): Promise<{ stop(): Promise<void> }> {
  const { redis, keys, identity } = runtime;
  const confinement = containment();
  const required = runtime.plugins.options.callPolicy.requireConfinement;
  if (required && confinement.missing.length > 0) {
    throw new ConfinementUnavailableError(
      `--require-confinement: this worker cannot confine plugin calls fully and runs none; missing: ${confinement.missing.join('; ')}`,
    );
  }
  const report = () =>
    reportConfinement(redis, keys, {
      worker: identity,
      mechanism: confinement.mechanism,
      enforced: confinement.enforced,
      missing: confinement.missing,
      required,
      at: new Date().toISOString(),
    }).catch((error: Error) => log('confinement-report-failed', { error: error.message }));
  await report();
  const reporting = setInterval(() => void report(), REPORT_EVERY_MS);
  reporting.unref();
  return {
    async stop() {
      clearInterval(reporting);
      await withdrawConfinement(redis, keys, identity).catch(() => {});
    },
  };
}
