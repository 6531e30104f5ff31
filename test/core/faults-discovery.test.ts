// Part of the fault matrix of the host core (test/support/fault-suite.ts), against
// a real Redis and real processes: discovery refuses packages it can never run
// (another protocol version, an executable escaping the package or over
// 128 MiB): listed with an actionable error, never trusted nor enabled.
import { chmod, copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { PluginUnavailableError, ProtocolMismatchError } from '../../src/core/platform/errors.js';
import { setConfinement, useCoreSuite } from '../support/core-suite.js';
import {
  ACTOR,
  FIXTURE,
  LIMITS,
  MAX_EXECUTABLE_BYTES,
  installFault,
  readJson,
  sparse,
  useFaultMatrix,
  type ErrorClass,
} from '../support/fault-suite.js';
import { pidFiles } from '../support/processes.js';

const matrix = useFaultMatrix('faults-discovery');

describe('discovery refuses packages it cannot ever run', () => {
  const discoverySuite = useCoreSuite('faults-discovery', {
    processActor: 'test-worker',
    callPolicy: { limits: LIMITS, requireConfinement: false },
    prepare: (root) => installFault(root, 'good', { id: 'disc-good' }),
  });
  let discovery: Core;
  let root: string;

  beforeAll(() => void ({ core: discovery, dataDir: root } = discoverySuite));

  async function expectUnusable(id: string, error: RegExp, code: string, errorClass: ErrorClass) {
    const listed = (await discovery.plugins.refresh(ACTOR)).find((plugin) => plugin.id === id);
    expect(listed).toBeDefined();
    expect(listed).toMatchObject({ available: false, trust: 'untrusted', enabled: false });
    expect(listed!.error).toMatch(error);
    // Every other package is still discovered.
    const good = (await discovery.plugins.list()).find((plugin) => plugin.id === 'disc-good');
    expect(good).toMatchObject({ available: true });
    let caught: unknown;
    try {
      await discovery.plugins.trust(id, listed!.fingerprint ?? 'a'.repeat(64), ACTOR);
      await setConfinement(discovery, id, 'package-writable');
    } catch (thrown) {
      caught = thrown;
    }
    expect(caught).toBeInstanceOf(errorClass);
    expect(caught).toMatchObject({ code });
    await expect(discovery.plugins.enable(id, ['project.metadata.read'], ACTOR)).rejects.toMatchObject({
      code,
    });
    return { listed: listed!, caught };
  }

  function recordDiscovery(fault: string, caught: unknown, health: string): void {
    matrix.recordRefused(fault, caught, health);
  }

  it('protocolVersion switchyard.plugin/v2: listed with an actionable error; trust and enable PROTOCOL_MISMATCH', async () => {
    const pkg = await installFault(root, 'good', {
      id: 'disc-v2',
      manifest: { protocolVersion: 'switchyard.plugin/v2' },
    });
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /switchyard\.plugin\/v2.*switchyard\.plugin\/v1.*ask the plugin's author/,
      'PROTOCOL_MISMATCH',
      ProtocolMismatchError,
    );
    recordDiscovery('protocolVersion switchyard.plugin/v2 (trust/enable)', caught, listed.health);
    expect((await pidFiles(pkg.dir)).length).toBe(0);
  });

  it('executable "../x" escaping the package: refused at discovery, never trusted', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-dotdot' });
    await copyFile(FIXTURE, join(root, 'plugins', 'x'));
    await chmod(join(root, 'plugins', 'x'), 0o755);
    await writeFile(
      join(pkg.dir, 'plugin.json'),
      JSON.stringify({ ...(await readJson(join(pkg.dir, 'plugin.json'))), executable: '../x' }),
    );
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /executable: .*no "\.\." escape/,
      'PLUGIN_UNAVAILABLE',
      PluginUnavailableError,
    );
    recordDiscovery('executable "../x" (trust/enable)', caught, listed.health);
    expect((await pidFiles(join(root, 'plugins'))).length).toBe(0);
  });

  it('an executable over 128 MiB (sparse): refused at discovery without being read', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-huge' });
    await sparse(join(pkg.dir, pkg.executable), MAX_EXECUTABLE_BYTES + 1);
    const started = performance.now();
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /larger than 134217728 bytes \(128 MiB\)/,
      'PLUGIN_UNAVAILABLE',
      PluginUnavailableError,
    );
    expect(listed.fingerprint).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
    recordDiscovery('executable of 128 MiB + 1 byte (trust/enable)', caught, listed.health);
  });

  it('an executable of exactly 128 MiB is within the limit (control)', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-max' });
    await sparse(join(pkg.dir, pkg.executable), MAX_EXECUTABLE_BYTES);
    const listed = (await discovery.plugins.refresh(ACTOR)).find((plugin) => plugin.id === pkg.id);
    expect(listed).toMatchObject({ available: true });
    expect(listed!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });
});
