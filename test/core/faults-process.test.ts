// Part of the fault matrix of the host core (test/support/fault-suite.ts), against
// a real Redis and real processes: a plugin process that crashes, hangs, answers
// too much, malformed or deep, or lies about its identity fails only its own call,
// with its typed error, unhealthy, nothing left running, the host able to go on.
import { describe, expect, it } from 'vitest';
import {
  IdentityMismatchError,
  MalformedResponseError,
  OversizedResponseError,
  PluginCallError,
  PluginCrashedError,
  PluginTimeoutError,
} from '../../src/core/platform/errors.js';
import { setConfinement } from '../support/core-suite.js';
import { ACTOR, ALL_SCOPES, LIMITS, installFault, arm, useFaultSuite } from '../support/fault-suite.js';

const faults = useFaultSuite('faults-process');
const { readyFault, observe, inspect, expectHostFine, expectCallFault, record } = faults;

describe('a misbehaving plugin process fails only its own call', () => {
  it('crash-before-initialize: CRASHED with exit code 1', async () => {
    const pkg = await readyFault('crash-before-initialize');
    const observed = await expectCallFault('crash-before-initialize', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 1, signal: null });
  });

  it('crash-after-initialize: CRASHED with exit code 2', async () => {
    const pkg = await readyFault('crash-after-initialize');
    const observed = await expectCallFault('crash-after-initialize', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 2, signal: null });
  });

  it('exit-zero-silent: exiting 0 without an answer is a crash too', async () => {
    const pkg = await readyFault('exit-zero-silent');
    const observed = await expectCallFault('exit-zero-silent', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 0 });
  });

  it('hang: TIMEOUT after the call timeout, the process killed', async () => {
    const pkg = await readyFault('hang');
    const observed = await expectCallFault('hang', pkg, { code: 'TIMEOUT', errorClass: PluginTimeoutError });
    expect(observed.elapsedMs).toBeGreaterThanOrEqual(LIMITS.callTimeoutMs - 50);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.callTimeoutMs + LIMITS.graceMs + 1_000);
  });

  it('hang-grandchild: TIMEOUT, and the grandchild holding stdout dies with the group', async () => {
    const pkg = await readyFault('hang-grandchild');
    const observed = await expectCallFault('hang-grandchild', pkg, {
      code: 'TIMEOUT',
      errorClass: PluginTimeoutError,
    });
    expect(observed.newPidFiles.map((file) => file.role).sort()).toEqual(['grandchild', 'plugin']);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.callTimeoutMs + LIMITS.graceMs + 1_000);
  });

  it('oversized-line: a response of 1 MiB + 1 byte is OVERSIZED_RESPONSE', async () => {
    const pkg = await readyFault('oversized-line');
    await expectCallFault('oversized-line (1 MiB + 1 byte)', pkg, {
      code: 'OVERSIZED_RESPONSE',
      errorClass: OversizedResponseError,
    });
  });

  it('max-line: a valid response of exactly 1 MiB is accepted (the limit is not off by one)', async () => {
    const pkg = await readyFault('max-line');
    const observed = await observe(pkg, inspect(pkg));
    record('max-line (exactly 1 MiB, control)', observed);
    expect(observed.error).toBeUndefined();
    expect((observed.result as { summary: string }).summary).toMatch(/^p+$/);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it.each([
    'non-json',
    'unknown-field-result',
    'unknown-field-envelope',
    'unknown-field-error',
    'wrong-id',
    'two-documents',
    'deep-line',
    'deep-result',
    'deep-error',
  ])('%s: MALFORMED_RESPONSE', async (mode) => {
    const pkg = await readyFault(mode);
    await expectCallFault(mode, pkg, { code: 'MALFORMED_RESPONSE', errorClass: MalformedResponseError });
  });

  it('deep-output: an operate output 200,000 arrays deep is MALFORMED_RESPONSE, not a stack overflow', async () => {
    const pkg = await readyFault('deep-output');
    const observed = await expectCallFault(
      'deep-output (200,000 arrays deep)',
      pkg,
      { code: 'MALFORMED_RESPONSE', errorClass: MalformedResponseError },
      (options) => faults.core.plugins.operate(pkg.id, 'demo', 'touch', {}, options),
    );
    expect((observed.error as Error).message).toMatch(/nested deeper than \d+ levels/);
  });

  // Contract (PROTOCOL §8): -32000 is the plugin's own error, not a fault: health is left as it was.
  it('rpc-error: a JSON-RPC error is PLUGIN_ERROR, health unchanged, and the logged error is redacted', async () => {
    const pkg = await readyFault('rpc-error');
    const observed = await observe(pkg, inspect(pkg));
    record('rpc-error (-32000 with a token)', observed);
    expect(observed.error).toBeInstanceOf(PluginCallError);
    expect(observed.error).toMatchObject({ code: 'PLUGIN_ERROR', rpcCode: -32000 });
    expect(observed.spawned).toHaveLength(1);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
    expect(observed.detail.lastError).toBeUndefined();
    const logs = JSON.stringify(await faults.core.plugins.logs(pkg.id));
    expect(logs).toContain('[REDACTED]');
    expect(logs).not.toContain('s3cr3t-t0ken-value');
    await expectHostFine();
  });

  it('non-json-secret: a malformed line quoted into the stored error keeps its secrets redacted', async () => {
    const pkg = await readyFault('non-json-secret');
    const observed = await expectCallFault('non-json-secret (quoted secrets in the line)', pkg, {
      code: 'MALFORMED_RESPONSE',
      errorClass: MalformedResponseError,
    });
    const stored = `${observed.detail.lastError} ${JSON.stringify(await faults.core.plugins.logs(pkg.id))}`;
    expect(stored).toContain('[REDACTED]');
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain('tok-5ecret-value');
  });
});

describe('a running plugin must echo the trusted identity', () => {
  it.each([
    ['lie-id', 'plugin.id'],
    ['lie-name', 'plugin.name'],
    ['lie-version', 'plugin.version'],
    ['lie-capabilities', 'plugin.capabilities'],
    ['lie-requested-scopes', 'plugin.requestedScopes'],
    ['lie-granted-scopes', 'grantedScopes'],
  ])('%s: IDENTITY_MISMATCH naming only %s', async (mode, field) => {
    const pkg = await readyFault(mode);
    const observed = await expectCallFault(mode, pkg, {
      code: 'IDENTITY_MISMATCH',
      errorClass: IdentityMismatchError,
    });
    const message = (observed.error as Error).message;
    expect(message).toContain(`trusted package: ${field} `);
    expect(message).not.toContain('; ');
  });

  it('a plugin that lies from the start is never enabled', async () => {
    const pkg = await installFault(faults.dataDir, 'lie-version', { id: 'fault-lie-at-enable' });
    await arm(pkg);
    await faults.core.plugins.refresh(ACTOR);
    const { fingerprint } = await faults.core.plugins.show(pkg.id);
    await faults.core.plugins.trust(pkg.id, fingerprint!, ACTOR);
    await setConfinement(faults.core, pkg.id, 'package-writable');
    const observed = await observe(pkg, () => faults.core.plugins.enable(pkg.id, ALL_SCOPES, ACTOR));
    record('lie-version at enable', observed);
    expect(observed.error).toBeInstanceOf(IdentityMismatchError);
    expect(observed.detail).toMatchObject({ enabled: false, grantedScopes: [], health: 'unhealthy' });
    expect(observed.newPidFiles).toHaveLength(1);
    expect(observed.alive).toEqual([]);
    await expectHostFine();
  });
});
