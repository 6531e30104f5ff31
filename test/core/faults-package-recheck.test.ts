// Part of the fault matrix of the host core (test/support/fault-suite.ts), against
// a real Redis and real processes: the package is re-checked on disk before
// every call: a tampered executable, directory or manifest is refused before
// anything is spawned, and a changed fingerprint disables the plugin, audited.
import { appendFile, chmod, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import {
  FingerprintChangedError,
  PackageInvalidError,
  PluginUnavailableError,
} from '../../src/core/platform/errors.js';
import { ACTOR, ALL_SCOPES, useFaultSuite, type Pkg } from '../support/fault-suite.js';
import { pidFiles } from '../support/processes.js';

const faults = useFaultSuite('faults-package-recheck');
const { readyFault, expectRefusedBeforeSpawn } = faults;

describe('the package is re-checked on disk before every call', () => {
  const cases: [string, string, (pkg: Pkg) => Promise<void>, RegExp][] = [
    [
      'pkg-symlink',
      'executable replaced by a symlink (to identical bytes in the package)',
      async (pkg) => {
        const path = join(pkg.dir, pkg.executable);
        await rename(path, join(pkg.dir, 'real-plugin.mjs'));
        await symlink('real-plugin.mjs', path);
      },
      /symlink/,
    ],
    [
      'pkg-group-writable',
      'executable made group-writable',
      (pkg) => chmod(join(pkg.dir, pkg.executable), 0o775),
      /group-writable/,
    ],
    [
      'pkg-world-writable',
      'executable made world-writable',
      (pkg) => chmod(join(pkg.dir, pkg.executable), 0o757),
      /world-writable/,
    ],
    [
      'pkg-dir-group-writable',
      'package directory made group-writable (someone else could swap the executable)',
      (pkg) => chmod(pkg.dir, 0o775),
      /directory .*pkg-dir-group-writable is group-writable/,
    ],
    [
      'pkg-dir-world-writable',
      'package directory made world-writable',
      (pkg) => chmod(pkg.dir, 0o777),
      /directory .*pkg-dir-world-writable is world-writable/,
    ],
    [
      'pkg-no-exec',
      'execute bit removed',
      (pkg) => chmod(join(pkg.dir, pkg.executable), 0o644),
      /no execute bit/,
    ],
  ];

  it.each(cases)('%s: %s: PACKAGE_INVALID before spawning', async (id, fault, tamper, message) => {
    const pkg = await readyFault('good', { id, arm: false });
    await tamper(pkg);
    await expectRefusedBeforeSpawn(fault, pkg, {
      code: 'PACKAGE_INVALID',
      errorClass: PackageInvalidError,
      message,
    });
    const after = await faults.core.plugins.show(pkg.id);
    expect(after.available).toBe(false);
    expect(after.error).toMatch(message);
    // And it stays refused, still without running anything.
    await expect(faults.core.plugins.inspect(pkg.id, 'demo')).rejects.toBeInstanceOf(PluginUnavailableError);
    expect((await pidFiles(pkg.dir)).length).toBe(1);
  });

  it('executable escaping the package through a directory swapped for a symlink: PACKAGE_INVALID', async () => {
    const pkg = await readyFault('good', {
      id: 'pkg-escape',
      executable: 'bin/fault-plugin.mjs',
      arm: false,
    });
    // Same bytes outside the package: the fingerprint alone would not notice.
    const outside = join(faults.dataDir, 'outside-bin');
    await rename(join(pkg.dir, 'bin'), outside);
    await symlink(outside, join(pkg.dir, 'bin'));
    await expectRefusedBeforeSpawn('executable escapes the package (bin/ → symlink outside)', pkg, {
      code: 'PACKAGE_INVALID',
      errorClass: PackageInvalidError,
      message: /outside the package/,
    });
    // Only the enable exchange ran (in the package directory); the refused call started nothing.
    expect((await pidFiles(pkg.dir)).length).toBe(1);
    expect((await pidFiles(outside)).length).toBe(0);
  });

  it.each([
    ['one byte appended to the executable', 'fault-plugin.mjs'],
    ['one byte appended to plugin.json', 'plugin.json'],
  ])('%s: FINGERPRINT_CHANGED before spawning, disabled, grants revoked, audited', async (fault, file) => {
    const pkg = await readyFault('good', { id: `pkg-append-${file.replace('.', '-')}`, arm: false });
    const trusted = await faults.core.plugins.show(pkg.id);
    expect(trusted.grantedScopes).toEqual(ALL_SCOPES);
    await appendFile(join(pkg.dir, file), '\n');
    const observed = await expectRefusedBeforeSpawn(fault, pkg, {
      code: 'FINGERPRINT_CHANGED',
      errorClass: FingerprintChangedError,
      message: /changed on disk/,
    });
    expect(observed.detail).toMatchObject({ trust: 'changed', enabled: false, grantedScopes: [] });
    expect(observed.detail.trustedFingerprint).toBe(trusted.fingerprint);
    const audit = await readAudit(faults.core.redis, faults.core.keys, 20);
    const entry = audit.find(
      (item) => item.action === 'plugin.fingerprint-changed' && item.target === pkg.id,
    );
    expect(entry).toBeDefined();
    expect(entry!.detail).toMatchObject({ trusted: trusted.fingerprint });
    expect(entry!.detail.current).not.toBe(trusted.fingerprint);
    // Every later call is refused too, until a new review.
    await expect(faults.core.plugins.inspect(pkg.id, 'demo')).rejects.toMatchObject({
      code: 'FINGERPRINT_CHANGED',
    });
    await expect(faults.core.plugins.enable(pkg.id, ALL_SCOPES, ACTOR)).rejects.toMatchObject({
      code: 'FINGERPRINT_CHANGED',
    });
    expect((await pidFiles(pkg.dir)).length).toBe(1);
  });
});
