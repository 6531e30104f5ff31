// PROTOCOL §3 ownership: a package another local user owns
// — its executable, plugin.json, its directory or any directory above, even
// one with mode 0755 — could be swapped between verification and start, so it
// is refused in discovery and before every call, naming the path, the owner
// and the fix. Files are given away with chown, so these tests need root.
import { chmod, chown, lchown, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { discoverPackages } from '../../src/core/plugins/discovery.js';
import { PackageInvalidError } from '../../src/core/platform/errors.js';
import { trustAndEnable, useCoreSuite, useDataDir } from '../support/core-suite.js';
import { NATIVE_FIXTURE_DIST, installPackage } from '../support/data-dir.js';
import { testManifest as manifest, writeScriptPackage } from '../support/manifest.js';
import { NOT_ROOT_REASON, OTHER_UID, RUNS_AS_ROOT, chownToOther } from '../support/special-files.js';

const writePackage = (pluginsDir: string, id: string) => writeScriptPackage(pluginsDir, id, manifest(id));

/** The tail every ownership error carries: who may own it instead, and the fix. */
const refusal = (path: string) =>
  `not by root (the user the host runs as): that user could replace the plugin between its verification and its start (fix: chown root ${path}, or install the package where only you can write)`;

if (!RUNS_AS_ROOT) console.warn(`test/core/ownership.test.ts: ${NOT_ROOT_REASON}`);

describe.skipIf(!RUNS_AS_ROOT)('discovery refuses packages another user could swap', () => {
  const suite = useDataDir();
  let dataDir: string;
  let plugins: string;

  beforeAll(() => void ({ dataDir, plugins } = suite));

  const errorOf = async (pluginsDir: string, id: string) =>
    (await discoverPackages(pluginsDir)).find((item) => item.id === id)?.error;

  it('a package directory owned by another user, mode 0755, is refused naming it, its owner and the fix', async () => {
    const dir = await writePackage(plugins, 'foreign-dir');
    await writePackage(plugins, 'own');
    await chownToOther(dir);
    expect(await errorOf(plugins, 'foreign-dir')).toBe(
      `executable: the directory ${dir} is owned by uid ${OTHER_UID}, ${refusal(dir)}`,
    );
    expect(await errorOf(plugins, 'own')).toBeUndefined();
  });

  it('the owner is named from /etc/passwd when it has a name', async () => {
    const passwd = await readFile('/etc/passwd', 'utf8');
    const nobody = /^nobody:[^:]*:(\d+):/m.exec(passwd);
    if (!nobody) return;
    const dir = await writePackage(plugins, 'nobodys');
    await chmod(dir, 0o755);
    const { chown } = await import('node:fs/promises');
    await chown(join(dir, 'run'), Number(nobody[1]), Number(nobody[1]));
    expect(await errorOf(plugins, 'nobodys')).toBe(
      `executable: the executable ${join(dir, 'run')} is owned by uid ${nobody[1]} (nobody), ${refusal(join(dir, 'run'))}`,
    );
  });

  it('an executable owned by another user is refused', async () => {
    const dir = await writePackage(plugins, 'foreign-exec');
    await chownToOther(join(dir, 'run'));
    expect(await errorOf(plugins, 'foreign-exec')).toBe(
      `executable: the executable ${join(dir, 'run')} is owned by uid ${OTHER_UID}, ${refusal(join(dir, 'run'))}`,
    );
  });

  it('a plugin.json owned by another user is refused before it is read', async () => {
    const dir = await writePackage(plugins, 'foreign-manifest');
    await chownToOther(join(dir, 'plugin.json'));
    const path = join(dir, 'plugin.json');
    // Listed under its directory name: its content was never read.
    expect(await errorOf(plugins, 'foreign-manifest')).toBe(
      `the manifest ${path} is owned by uid ${OTHER_UID}, ${refusal(path)}`,
    );
  });

  it('a directory above the packages owned by another user is refused even when sticky', async () => {
    const shared = join(dataDir, 'shared');
    const below = join(shared, 'plugins');
    await writePackage(below, 'under-shared');
    await chownToOther(shared);
    await chmod(shared, 0o1777);
    expect(await errorOf(below, 'under-shared')).toBe(
      `executable: the directory ${shared} is owned by uid ${OTHER_UID}, ${refusal(shared)}`,
    );
  });

  it('a package directory that is world-writable and sticky (1777) is refused: others could add a module next to the plugin', async () => {
    const dir = await writePackage(plugins, 'sticky-package');
    await chmod(dir, 0o1777);
    expect(await errorOf(plugins, 'sticky-package')).toBe(
      `executable: the directory ${dir} is world-writable and sticky (chmod o-w it): in a package, sticky does not stop others from adding files next to the plugin, such as a module it imports`,
    );
    await chmod(dir, 0o3775); // group-writable and sticky (setgid too): the same
    expect(await errorOf(plugins, 'sticky-package')).toMatch(/is group-writable and sticky \(chmod g-w it\)/);
  });

  it('a sticky world-writable directory above the package (as /tmp) stays fine', async () => {
    const shared = join(dataDir, 'sticky-above');
    const below = join(shared, 'plugins');
    await writePackage(below, 'under-sticky');
    await chmod(shared, 0o1777);
    expect(await errorOf(below, 'under-sticky')).toBeUndefined();
  });

  it('a symlink on the way owned by another user is refused (it could be pointed elsewhere)', async () => {
    const real = join(dataDir, 'real-plugins');
    await writePackage(real, 'via-link');
    const link = join(dataDir, 'linked-plugins');
    await symlink(real, link);
    expect(await errorOf(link, 'via-link')).toBeUndefined();
    await lchown(link, OTHER_UID, OTHER_UID);
    expect(await errorOf(link, 'via-link')).toBe(
      `executable: the symlink ${link} is owned by uid ${OTHER_UID}, ${refusal(link)}`,
    );
  });
});

describe.skipIf(!RUNS_AS_ROOT)('every call re-checks ownership before it starts anything', () => {
  const suite = useCoreSuite('ownership', {
    prepare: (dataDir) => installPackage(dataDir, NATIVE_FIXTURE_DIST, 'native-fixture'),
  });
  let core: Core;
  let dataDir: string;

  beforeAll(() => void ({ core, dataDir } = suite));

  it('a trusted, enabled package whose directory is given to another user: PACKAGE_INVALID, unavailable', async () => {
    await trustAndEnable(core, 'native-fixture', ['project.metadata.read']);
    expect((await core.plugins.health('native-fixture')).status).toBe('healthy');

    const dir = join(dataDir, 'plugins', 'native-fixture');
    await chownToOther(dir); // mode stays 0755: no group or world bit to notice
    const refused = await core.plugins.health('native-fixture').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PackageInvalidError);
    expect((refused as Error).message).toBe(
      `plugin native-fixture: executable: the directory ${dir} is owned by uid ${OTHER_UID}, ${refusal(dir)}; the call was refused`,
    );
    const after = await core.plugins.show('native-fixture');
    expect(after.available).toBe(false);
    expect(after.error).toMatch(`owned by uid ${OTHER_UID}`);
  });

  it('a trusted, enabled package whose directory becomes 1777 (sticky): PACKAGE_INVALID before anything starts', async () => {
    const dir = join(dataDir, 'plugins', 'native-fixture');
    await chown(dir, 0, 0); // back from the test before
    await core.plugins.refresh('user:test');
    expect((await core.plugins.health('native-fixture')).status).toBe('healthy');
    await chmod(dir, 0o1777);
    const refused = await core.plugins.health('native-fixture').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PackageInvalidError);
    expect((refused as Error).message).toMatch(`the directory ${dir} is world-writable and sticky`);
  });
});
