// The review path through the core against a real Redis and real processes:
// refresh → trust → enable → inspect, and what tampering does to it.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { readAudit } from '../../src/core/access/audit.js';
import { FIXTURE_INSPECTOR_DIST, installPackage, makeProject } from '../support/data-dir.js';
import { useCoreSuite } from '../support/core-suite.js';

const suite = useCoreSuite('lifecycle', {
  processActor: 'test',
  prepare: (dataDir) => installPackage(dataDir, FIXTURE_INSPECTOR_DIST, 'fixture-inspector'),
});
let core: Core;
let dataDir: string;
beforeAll(() => void ({ core, dataDir } = suite));

describe('plugin lifecycle', () => {
  it('discovers a new package as untrusted and disabled, without running it', async () => {
    const [plugin] = await core.plugins.refresh('user:test');
    expect(plugin).toMatchObject({
      id: 'fixture-inspector',
      trust: 'untrusted',
      enabled: false,
      available: true,
      health: 'unknown',
    });
    expect(plugin!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses trust with a fingerprint other than the current one', async () => {
    await expect(core.plugins.trust('fixture-inspector', 'a'.repeat(64), 'user:test')).rejects.toThrow(
      /differs from the current fingerprint/,
    );
  });

  it('trusts the exact fingerprint, leaves it disabled, then enables a subset after a health exchange', async () => {
    const { fingerprint } = await core.plugins.show('fixture-inspector');
    const trusted = await core.plugins.trust('fixture-inspector', fingerprint!, 'user:test');
    expect(trusted).toMatchObject({ trust: 'trusted', enabled: false, grantedScopes: [] });
    await expect(core.plugins.enable('fixture-inspector', [], 'user:test')).rejects.toThrow(
      /at least one scope/,
    );
    const enabled = await core.plugins.enable(
      'fixture-inspector',
      ['project.metadata.read', 'project.files.read'],
      'user:test',
    );
    expect(enabled).toMatchObject({
      enabled: true,
      health: 'healthy',
      grantedScopes: ['project.metadata.read', 'project.files.read'],
    });
  });

  it('inspects a trusted project and refuses an untrusted one', async () => {
    const root = await makeProject(dataDir, 'demo', ['package.json', 'go.mod']);
    await core.projects.add(root, {}, 'user:test');
    await expect(core.plugins.inspect('fixture-inspector', 'demo')).rejects.toMatchObject({
      code: 'PROJECT_UNTRUSTED',
    });
    await core.projects.setTrusted('demo', true, 'user:test');
    const result = await core.plugins.inspect('fixture-inspector', 'demo');
    expect(result.facts.map((fact) => fact.id)).toEqual(['file.package.json', 'file.go.mod']);
  });

  it('one byte appended to the executable: refused before spawning, changed, grants revoked, audited', async () => {
    await appendFile(join(dataDir, 'plugins', 'fixture-inspector', 'fixture-inspector'), '\n');
    await expect(core.plugins.inspect('fixture-inspector', 'demo')).rejects.toMatchObject({
      code: 'FINGERPRINT_CHANGED',
    });
    const after = await core.plugins.show('fixture-inspector');
    expect(after).toMatchObject({ trust: 'changed', enabled: false, grantedScopes: [], health: 'unhealthy' });
    const audit = await readAudit(core.redis, core.keys, 5);
    // The refusal is audited, and so is the health it changed (healthy → unhealthy), newest first.
    expect(audit[0]).toMatchObject({ action: 'plugin.health', detail: { to: 'unhealthy' } });
    const changed = audit.find((entry) => entry.action === 'plugin.fingerprint-changed');
    expect(changed).toMatchObject({
      action: 'plugin.fingerprint-changed',
      actor: 'test',
      target: 'fixture-inspector',
    });
    expect(changed!.detail).toMatchObject({
      seenBy: 'test',
      trusted: after.trustedFingerprint,
      current: after.fingerprint,
    });
  });
});
