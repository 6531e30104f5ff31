// GET /metrics: Prometheus text. Queue depths and jobs by state, plugin health,
// worker count (read from Redis at scrape time), and the plugin call latency
// histogram that the calling processes record.
import { Gauge, Registry } from 'prom-client';
import { renderCallMetrics } from '../core/plugins/index.js';
import { QUEUE_NAMES } from '../core/redis/index.js';
import type { Runtime } from '../core/runtime/index.js';

export async function renderMetrics(runtime: Runtime): Promise<string> {
  const registry = new Registry();
  const jobs = new Gauge({
    name: 'switchyard_queue_jobs',
    help: 'Jobs in each queue by state.',
    labelNames: ['queue', 'state'],
    registers: [registry],
  });
  const health = new Gauge({
    name: 'switchyard_plugin_health',
    help: '1 for the current health of each plugin.',
    labelNames: ['plugin', 'health'],
    registers: [registry],
  });
  const enabled = new Gauge({
    name: 'switchyard_plugin_enabled',
    help: '1 when the plugin is enabled.',
    labelNames: ['plugin'],
    registers: [registry],
  });
  const workers = new Gauge({
    name: 'switchyard_workers',
    help: 'Worker connections consuming the inspect queue.',
    registers: [registry],
  });

  for (const name of Object.values(QUEUE_NAMES)) {
    const counts = await runtime.queues[name].getJobCounts();
    for (const [state, count] of Object.entries(counts)) jobs.set({ queue: name, state }, count);
  }
  for (const plugin of await runtime.plugins.list()) {
    for (const state of ['unknown', 'healthy', 'degraded', 'unhealthy'])
      health.set({ plugin: plugin.id, health: state }, plugin.health === state ? 1 : 0);
    enabled.set({ plugin: plugin.id }, plugin.enabled ? 1 : 0);
  }
  workers.set(await runtime.queues.inspect.getWorkersCount());
  return (await registry.metrics()) + (await renderCallMetrics(runtime.redis, runtime.keys));
}
