// Part of the fault matrix of the host core (test/support/fault-suite.ts), against
// a real Redis and real processes: what a plugin writes to stderr is bounded
// and redacted, a plugin that will not exit is killed after the grace period,
// and no secret of the host's environment reaches the plugin.
import { describe, expect, it } from 'vitest';
import { createCore } from '../../src/core/runtime/core-services.js';
import { STDERR_LINE_CHARS, STDERR_LINES } from '../../src/core/supervision/stderr-tail.js';
import { LIMITS, MiB, useFaultSuite, type Observed } from '../support/fault-suite.js';

const faults = useFaultSuite('faults-stderr-environment');
const { readyFault, observe, inspect, expectHostFine, record } = faults;

describe('bounded, redacted stderr and a minimal environment', () => {
  it('linger: a plugin that answers but will not exit is killed after the grace period (call succeeds)', async () => {
    const pkg = await readyFault('linger');
    const observed = await observe(pkg, inspect(pkg));
    record('linger (answers, ignores stdin close, has a child)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.newPidFiles.map((file) => file.role).sort()).toEqual(['grandchild', 'plugin']);
    expect(observed.elapsedMs).toBeGreaterThanOrEqual(LIMITS.graceMs - 100);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.graceMs + 1_500);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it('stderr-flood: 100 MiB of stderr is bounded, redacted and does not fail the call', async () => {
    const secrets = ['hunter2', 'abc.def', 'user:pw', 'pw@example.com', 'AKIAABCDEFGHIJKLMNOP'];
    const pkg = await readyFault('stderr-flood');
    const logsBefore = (await faults.core.plugins.logs(pkg.id, 1_000)).length;
    // The flood is about bounds, not speed: its call gets the default timeout so a
    // loaded machine cannot turn it into a TIMEOUT. Same Redis keys, same packages.
    const patient = await createCore({
      dataDir: faults.dataDir,
      redisUrl: faults.redis.url,
      prefix: faults.prefix,
      processActor: 'test-worker',
    });
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 10);
    let observed: Observed;
    try {
      observed = await observe(pkg, (options) => patient.plugins.inspect(pkg.id, 'demo', options));
    } finally {
      clearInterval(sampler);
      await patient.close();
    }
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const logs = await faults.core.plugins.logs(pkg.id, 1_000);
    const added = logs.slice(0, logs.length - logsBefore);
    const growthMiB = (rssPeak - rssBefore) / MiB;
    const longest = Math.max(0, ...added.map((entry) => entry.line.length));
    record(
      `stderr-flood (100 MiB with secrets; RSS +${growthMiB.toFixed(1)} MiB, ${added.length} log entries, ` +
        `longest ${longest} chars, ${Math.round(observed.elapsedMs)} ms)`,
      observed,
    );
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
    expect(growthMiB).toBeLessThan(100);
    expect(added.length).toBeGreaterThan(0);
    expect(added.length).toBeLessThanOrEqual(STDERR_LINES + 1);
    for (const entry of added) {
      expect(entry.source).toBe('stderr');
      expect(entry.line.length).toBeLessThanOrEqual(STDERR_LINE_CHARS);
    }
    const text = added.map((entry) => entry.line).join('\n');
    expect(text).toContain('[REDACTED]');
    expect(text).toContain('Bearer [REDACTED]');
    for (const secret of secrets) expect(text).not.toContain(secret);
    await expectHostFine();
  });

  it('stderr-split-secret: the 64 KiB cut does not turn a secret line into an unredacted fragment', async () => {
    const pkg = await readyFault('stderr-split-secret');
    const observed = await observe(pkg, inspect(pkg));
    record('stderr-split-secret (64 KiB cut inside password=…)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const logs = await faults.core.plugins.logs(pkg.id, 1_000);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.map((entry) => entry.line).join('\n')).not.toContain('hunter2');
  });

  it('stderr-json-secret: secrets in a structured (JSON) stderr line are redacted', async () => {
    const pkg = await readyFault('stderr-json-secret');
    const observed = await observe(pkg, inspect(pkg));
    record('stderr-json-secret ({"password":"…"} on stderr)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const text = (await faults.core.plugins.logs(pkg.id)).map((entry) => entry.line).join('\n');
    expect(text).toContain('"msg":"connecting"');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('k-1234567');
  });

  it('env-dump: no secret of the host reaches the plugin, only PATH, TMPDIR, LANG and the protocol marker', async () => {
    const planted = {
      OPENAI_API_KEY: 'sk-test-openai-0123456789',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456789abcdef',
      GITHUB_TOKEN: 'ghp_testtoken0123456789',
      DATABASE_URL: 'postgres://app:db-pass-0123@db.example.com/app',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    const pkg = await readyFault('env-dump');
    let observed: Observed;
    try {
      observed = await observe(pkg, inspect(pkg));
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    record('env-dump (host has OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DATABASE_URL)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const facts = (observed.result as { facts: { id: string; label: string; value: string }[] }).facts;
    const env = new Map(facts.filter((fact) => fact.id.startsWith('env.')).map((f) => [f.label, f.value]));
    expect(env.size).toBeGreaterThan(0);
    for (const name of env.keys()) {
      expect(['PATH', 'TMPDIR', 'LANG', 'SWITCHYARD_PLUGIN_PROTOCOL', 'NODE_OPTIONS']).toContain(name);
    }
    expect(env.has('HOME')).toBe(false);
    expect(env.get('SWITCHYARD_PLUGIN_PROTOCOL')).toBe('switchyard.plugin/v1');
    expect(env.get('PATH')).toBe(process.env.PATH);
    // A Node script started from its verified descriptor reads that descriptor (PROTOCOL §9.3).
    if (env.has('NODE_OPTIONS')) expect(env.get('NODE_OPTIONS')).toBe('--preserve-symlinks-main');
    const everything = JSON.stringify(observed.result);
    for (const value of Object.values(planted)) expect(everything).not.toContain(value);
  });
});
