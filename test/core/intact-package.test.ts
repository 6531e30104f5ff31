// The per-call verification's fast path (src/core/plugins/intact-package.ts) answers
// "intact, fingerprint X" only for a package that passes every on-disk rule
// and whose fingerprint the full path already computed; for anything else it
// answers undefined, so the full path runs and words the error.
import { appendFile, chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashExecutable } from '../../src/core/plugins/fingerprint.js';
import { intactFingerprint, type PackageLocation } from '../../src/core/plugins/intact-package.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'examples', 'plugins', 'native-fixture', 'dist');

let root: string;
let pkg: PackageLocation;

/** A package, aged past the fingerprint cache's 2 s racy-ctime window. */
async function agedPackage(): Promise<PackageLocation> {
  const packageDir = join(root, 'plugins', 'native-fixture');
  await mkdir(packageDir, { recursive: true });
  await chmod(root, 0o755);
  await chmod(join(root, 'plugins'), 0o755);
  await chmod(packageDir, 0o755);
  await copyFile(join(FIXTURE, 'plugin.json'), join(packageDir, 'plugin.json'));
  await copyFile(join(FIXTURE, 'native-fixture'), join(packageDir, 'native-fixture'));
  await chmod(join(packageDir, 'native-fixture'), 0o755);
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  return { packageDir, executable: 'native-fixture', manifestPath: join(packageDir, 'plugin.json') };
}

/** What the full path computes (and caches). */
async function fullFingerprint(location: PackageLocation): Promise<string> {
  const manifest = await readFile(location.manifestPath);
  const fingerprint = await hashExecutable(manifest, join(location.packageDir, location.executable));
  if (typeof fingerprint !== 'string') throw new Error(fingerprint.error);
  return fingerprint;
}

describe('intactFingerprint', () => {
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'switchyard-intact-'));
    pkg = await agedPackage();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is the full path’s fingerprint once it is cached, and undefined before', async () => {
    expect(intactFingerprint(pkg)).toBeUndefined();
    const fingerprint = await fullFingerprint(pkg);
    expect(intactFingerprint(pkg)).toBe(fingerprint);
  });

  it('is undefined when a directory above the package becomes group-writable', async () => {
    await fullFingerprint(pkg);
    await chmod(join(root, 'plugins'), 0o775);
    expect(intactFingerprint(pkg)).toBeUndefined();
  });

  it('is undefined when the executable loses its execute bit or becomes world-writable', async () => {
    await fullFingerprint(pkg);
    const path = join(pkg.packageDir, pkg.executable);
    await chmod(path, 0o644);
    expect(intactFingerprint(pkg)).toBeUndefined();
    await chmod(path, 0o757);
    expect(intactFingerprint(pkg)).toBeUndefined();
  });

  it('is undefined when the executable is swapped for a symlink to the same bytes', async () => {
    await fullFingerprint(pkg);
    const path = join(pkg.packageDir, pkg.executable);
    await rename(path, join(pkg.packageDir, 'real'));
    await symlink(join(pkg.packageDir, 'real'), path);
    expect(intactFingerprint(pkg)).toBeUndefined();
  });

  it('is undefined when the package directory is reached through a symlink', async () => {
    await fullFingerprint(pkg);
    const linked = join(root, 'linked');
    await symlink(pkg.packageDir, linked);
    expect(
      intactFingerprint({ ...pkg, packageDir: linked, manifestPath: join(linked, 'plugin.json') }),
    ).toBeUndefined();
  });

  it('is undefined when plugin.json changed by one byte (no cached fingerprint for it)', async () => {
    await fullFingerprint(pkg);
    await appendFile(pkg.manifestPath, ' ');
    expect(intactFingerprint(pkg)).toBeUndefined();
  });

  it('is undefined for an executable name that escapes the package', async () => {
    await fullFingerprint(pkg);
    expect(intactFingerprint({ ...pkg, executable: '../native-fixture/native-fixture' })).toBeUndefined();
  });
});
