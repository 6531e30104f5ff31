// Plugin call latency by plugin and method, recorded by whichever process made
// the call (workers, mostly) into one Redis hash, and rendered by the api's
// /metrics as a Prometheus histogram. Recording is fire-and-forget: it never
// adds latency to a call. A process adds its calls up and writes the sums at
// most every FLUSH_MS (one pipeline instead of one per call), and on close: a
// second keeps a busy worker's share of Redis commands per call small, and a
// Prometheus scrape (15 s or more apart) sees no difference.
import type { Redis } from 'ioredis';
import type { Keys } from '../redis/index.js';

export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const FLUSH_MS = 1_000;

interface Pending {
  key: string;
  /** Field → increment; `…|sum` fields are seconds (HINCRBYFLOAT). */
  counts: Map<string, number>;
  timer?: NodeJS.Timeout | undefined;
}

const pending = new WeakMap<Redis, Pending>();

export function recordCall(
  redis: Redis,
  keys: Keys,
  pluginId: string,
  method: string,
  seconds: number,
  ok: boolean,
): void {
  const bucket = LATENCY_BUCKETS.findIndex((limit) => seconds <= limit);
  const base = `${pluginId}|${method}`;
  let sums = pending.get(redis);
  if (!sums) pending.set(redis, (sums = { key: keys.callMetrics, counts: new Map() }));
  const add = (field: string, value: number) => sums.counts.set(field, (sums.counts.get(field) ?? 0) + value);
  add(`${base}|b${bucket === -1 ? 'inf' : bucket}`, 1);
  add(`${base}|count`, 1);
  add(`${base}|sum`, seconds);
  add(`${base}|${ok ? 'ok' : 'failed'}`, 1);
  sums.timer ??= setTimeout(() => void flushCallMetrics(redis), FLUSH_MS).unref();
}

/** Writes what this process recorded on `redis` and has not written yet (in one pipeline). */
export async function flushCallMetrics(redis: Redis): Promise<void> {
  const sums = pending.get(redis);
  if (!sums || sums.counts.size === 0) return;
  clearTimeout(sums.timer);
  sums.timer = undefined;
  const pipeline = redis.pipeline();
  for (const [field, value] of sums.counts) {
    if (field.endsWith('|sum')) pipeline.hincrbyfloat(sums.key, field, value);
    else pipeline.hincrby(sums.key, field, value);
  }
  sums.counts = new Map();
  await pipeline.exec().catch(() => {});
}

/** Prometheus text for switchyard_plugin_call_seconds (histogram) and call outcomes. */
export async function renderCallMetrics(redis: Redis, keys: Keys): Promise<string> {
  const raw = await redis.hgetall(keys.callMetrics);
  const series = new Map<string, Map<string, number>>();
  for (const [field, value] of Object.entries(raw)) {
    const parts = field.split('|');
    const name = parts.pop()!;
    const base = parts.join('|');
    if (!series.has(base)) series.set(base, new Map());
    series.get(base)!.set(name, Number(value));
  }
  const lines = [
    '# HELP switchyard_plugin_call_seconds Duration of supervised plugin calls (spawn to teardown).',
    '# TYPE switchyard_plugin_call_seconds histogram',
  ];
  const outcomes = [
    '# HELP switchyard_plugin_calls_total Supervised plugin calls by outcome.',
    '# TYPE switchyard_plugin_calls_total counter',
  ];
  for (const [base, values] of [...series.entries()].sort()) {
    const [plugin, method] = base.split('|');
    const labels = `plugin="${escapeLabel(plugin ?? '')}",method="${escapeLabel(method ?? '')}"`;
    let cumulative = 0;
    LATENCY_BUCKETS.forEach((limit, index) => {
      cumulative += values.get(`b${index}`) ?? 0;
      lines.push(`switchyard_plugin_call_seconds_bucket{${labels},le="${limit}"} ${cumulative}`);
    });
    lines.push(`switchyard_plugin_call_seconds_bucket{${labels},le="+Inf"} ${values.get('count') ?? 0}`);
    lines.push(`switchyard_plugin_call_seconds_sum{${labels}} ${values.get('sum') ?? 0}`);
    lines.push(`switchyard_plugin_call_seconds_count{${labels}} ${values.get('count') ?? 0}`);
    outcomes.push(`switchyard_plugin_calls_total{${labels},outcome="ok"} ${values.get('ok') ?? 0}`);
    outcomes.push(`switchyard_plugin_calls_total{${labels},outcome="failed"} ${values.get('failed') ?? 0}`);
  }
  return `${lines.join('\n')}\n${outcomes.join('\n')}\n`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
