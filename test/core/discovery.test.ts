// Discovery never runs anything, isolates broken packages, reports duplicate
// ids, refuses more than 100 packages; refresh reconciles the registry.
import { chmod, cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import type { Core } from '../../src/core/runtime/core-services.js';
import { MAX_PACKAGES, discoverPackages } from '../../src/core/plugins/discovery.js';
import { trustAndEnable, useCoreSuite, useDataDir } from '../support/core-suite.js';
import { testManifest as manifest, writeScriptPackage } from '../support/manifest.js';
import { NATIVE_FIXTURE_DIST, installPackage } from '../support/data-dir.js';

/** A package whose executable would leave a marker if anything ever ran it. */
const writePackage = (pluginsDir: string, dir: string, manifestText: string) =>
  writeScriptPackage(pluginsDir, dir, manifestText, `#!/bin/sh\ntouch "${join(pluginsDir, dir, 'RAN')}"\n`);

describe('discoverPackages', () => {
  const suite = useDataDir();
  let dataDir: string;
  let pluginsDir: string;

  beforeAll(() => void ({ dataDir, plugins: pluginsDir } = suite));

  it('sorts by id, ignores files and directories without plugin.json, and runs nothing', async () => {
    await writePackage(pluginsDir, 'zz-dir', manifest('alpha'));
    await writePackage(pluginsDir, 'aa-dir', manifest('beta'));
    await mkdir(join(pluginsDir, 'empty-dir'));
    await writeFile(join(pluginsDir, 'stray-file.json'), manifest('stray'));
    const found = await discoverPackages(pluginsDir);
    expect(found.map((item) => item.id)).toEqual(['alpha', 'beta']);
    expect(found.every((item) => item.error === undefined && /^[0-9a-f]{64}$/.test(item.fingerprint!))).toBe(
      true,
    );
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(pluginsDir, 'zz-dir', 'RAN'))).toBe(false);
  });

  it('reports a broken package with its own error while the others are still discovered', async () => {
    await writePackage(
      pluginsDir,
      'broken',
      '{"schemaVersion": "switchyard.plugin-manifest/v1", "id": "gamma"',
    );
    const found = await discoverPackages(pluginsDir);
    expect(found.map((item) => [item.id, item.error === undefined])).toEqual([
      ['alpha', true],
      ['beta', true],
      ['broken', false],
    ]);
    expect(found.find((item) => item.id === 'broken')!.error).toMatch(/not exactly one valid JSON document/);
    await rm(join(pluginsDir, 'broken'), { recursive: true });
  });

  it('a plugins directory others may write to makes every package unavailable, saying why; sticky is fine', async () => {
    const own = join(dataDir, 'shared-plugins');
    await writePackage(own, 'one', manifest('one'));
    await writePackage(own, 'two', manifest('two', { executable: 'bin/run' }));
    await mkdir(join(own, 'two', 'bin'));
    await cp(join(own, 'two', 'run'), join(own, 'two', 'bin', 'run'));
    await chmod(join(own, 'two', 'bin'), 0o777);
    let found = await discoverPackages(own);
    expect(found.find((item) => item.id === 'one')!.error).toBeUndefined();
    expect(found.find((item) => item.id === 'two')!.error).toMatch(/directory .*two\/bin is world-writable/);
    await chmod(own, 0o775);
    found = await discoverPackages(own);
    for (const item of found) expect(item.error).toMatch(/directory .*shared-plugins is group-writable/);
    // Sticky: others may add entries but not replace ours.
    await chmod(own, 0o1777);
    await chmod(join(own, 'two', 'bin'), 0o755);
    found = await discoverPackages(own);
    expect(found.map((item) => item.error)).toEqual([undefined, undefined]);
    await rm(own, { recursive: true });
  });

  it('a group-writable directory further up is named too, up to the root', async () => {
    const team = join(dataDir, 'team');
    const plugins = join(team, 'switchyard', 'plugins');
    await writePackage(plugins, 'three', manifest('three'));
    expect((await discoverPackages(plugins))[0]!.error).toBeUndefined();
    await chmod(team, 0o775);
    expect((await discoverPackages(plugins))[0]!.error).toMatch(
      /directory .*\/team is group-writable \(chmod g-w it\): others could replace the plugin/,
    );
    await rm(team, { recursive: true });
  });

  it('reports two packages with the same id, naming both manifests; neither is usable', async () => {
    const second = await writePackage(pluginsDir, 'copy-of-alpha', manifest('alpha'));
    const found = (await discoverPackages(pluginsDir)).filter((item) => item.id === 'alpha');
    expect(found).toHaveLength(2);
    for (const item of found) {
      expect(item.error).toContain(join(pluginsDir, 'zz-dir', 'plugin.json'));
      expect(item.error).toContain(join(second, 'plugin.json'));
    }
    await rm(second, { recursive: true });
  });

  it(`refuses more than ${MAX_PACKAGES} packages with a clear error`, async () => {
    const crowded = join(dataDir, 'crowded');
    for (let index = 0; index <= MAX_PACKAGES; index += 1) {
      await writePackage(crowded, `p${index}`, manifest(`p${index}`));
    }
    await expect(discoverPackages(crowded)).rejects.toThrow(/101 plugin packages; at most 100/);
  });
});

describe('refresh reconciles the registry', () => {
  const suite = useCoreSuite('discovery', {
    prepare: (dataDir) => installPackage(dataDir, NATIVE_FIXTURE_DIST, 'native-fixture'),
  });
  let core: Core;
  let dataDir: string;
  beforeAll(() => void ({ core, dataDir } = suite));

  it('keeps a removed package listed as unavailable with its trust decision, inert', async () => {
    await trustAndEnable(core, 'native-fixture', ['project.metadata.read']);
    await rm(join(dataDir, 'plugins', 'native-fixture'), { recursive: true });
    const [after] = await core.plugins.refresh('user:test');
    expect(after).toMatchObject({ id: 'native-fixture', available: false, trust: 'trusted', enabled: true });
    expect(after!.error).toMatch(/package removed/);
    await expect(core.plugins.health('native-fixture')).rejects.toMatchObject({ code: 'PLUGIN_UNAVAILABLE' });
    expect((await readAudit(core.redis, core.keys, 1))[0]).toMatchObject({ action: 'plugin.removed' });
  });

  it('a changed package found by refresh is disabled, grants revoked, audited; the old bytes restore trust', async () => {
    await cp(NATIVE_FIXTURE_DIST, join(dataDir, 'plugins', 'native-fixture'), { recursive: true });
    const [restored] = await core.plugins.refresh('user:test');
    expect(restored).toMatchObject({ available: true, trust: 'trusted', enabled: true });
    const manifestPath = join(dataDir, 'plugins', 'native-fixture', 'plugin.json');
    const { appendFile, readFile } = await import('node:fs/promises');
    const original = await readFile(manifestPath);
    await appendFile(manifestPath, ' ');
    const [changed] = await core.plugins.refresh('user:test');
    expect(changed).toMatchObject({ trust: 'changed', enabled: false, grantedScopes: [] });
    expect((await readAudit(core.redis, core.keys, 1))[0]).toMatchObject({
      action: 'plugin.fingerprint-changed',
    });
    await writeFile(manifestPath, original);
    const [back] = await core.plugins.refresh('user:test');
    expect(back).toMatchObject({ trust: 'trusted', enabled: false, grantedScopes: [] });
  });

  it("another host's changed bytes stay 'changed' when this host's copy still holds the trusted bytes", async () => {
    // The test before left native-fixture trusted. What a worker on another machine records when its copy differs (plugin-calls #markChanged).
    const record = JSON.parse((await core.redis.hget(core.keys.plugins, 'native-fixture'))!);
    const otherBytes = 'f'.repeat(64);
    await core.redis.hset(
      core.keys.plugins,
      'native-fixture',
      JSON.stringify({
        ...record,
        trust: 'changed',
        changedOn: 'another-host',
        enabled: false,
        grantedScopes: [],
        fingerprint: otherBytes,
      }),
    );
    const [seenHere] = await core.plugins.refresh('user:test');
    expect(seenHere).toMatchObject({ trust: 'changed', enabled: false });
    expect(seenHere!.fingerprint).toBe(record.trustedFingerprint);
    // A new review of the bytes clears it.
    await core.plugins.trust('native-fixture', seenHere!.fingerprint!, 'user:test');
    const [reviewed] = await core.plugins.refresh('user:test');
    expect(reviewed).toMatchObject({ trust: 'trusted', enabled: false });
  });
  it('a rejected manifest is never quoted raw: its pieces are redacted and cut to 120 characters', async () => {
    const skKey = `sk-proj-${'aZ3kQ9xW2mP7'.repeat(4)}`;
    const awsId = `${'AKIA'}IOSFODNN7EXAMPLE`;
    const long = `${'x'.repeat(300)}`;
    const packageDir = join(dataDir, 'plugins', 'leaky-manifest');
    await writeScriptPackage(
      join(dataDir, 'plugins'),
      'leaky-manifest',
      JSON.stringify({
        ...JSON.parse(manifest('leaky-manifest')),
        name: `Leaky ${long}`,
        version: 'db_password=hunter9',
        protocolVersion: skKey,
        [`extra_${awsId}`]: 1,
        [`unknown_${long}`]: 2,
      }),
    );
    await core.plugins.refresh('user:test');
    const listed = (await core.plugins.list()).find((plugin) => plugin.id === 'leaky-manifest');
    const shown = await core.plugins.show('leaky-manifest');
    expect(listed).toMatchObject({ available: false });
    const texts = JSON.stringify([listed, shown]);
    for (const secret of ['hunter9', skKey.slice(8), 'IOSFODNN7EXAMPLE']) expect(texts).not.toContain(secret);
    expect(listed!.error).toContain('[REDACTED]');
    // No quoted piece and no field over 120 characters (the long name and the long key are cut).
    expect(texts).not.toContain('x'.repeat(120));
    expect(listed!.name.length).toBeLessThanOrEqual(120);
    for (const quoted of listed!.error!.match(/"(?:[^"\\]|\\.)*"/g) ?? []) {
      expect(quoted.length).toBeLessThanOrEqual(122);
    }
    await rm(packageDir, { recursive: true });
  });
});
