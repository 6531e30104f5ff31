// Exec exactly what was verified (docs/PROTOCOL.md §9.3): the plugin is started
// from a descriptor of the file whose fingerprint was checked, not by its path
// again. A same-user swap by atomic rename right after verification runs
// nothing unverified: before the host opened the file the call is refused;
// after it, the verified bytes run although the path names others now. A
// plugin call of the service starts from the verified copy of the package
// (package-copy.ts); a swap of the original before it is a package change.
import { closeSync, openSync } from 'node:fs';
import { access, chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../../src/core/runtime/core-services.js';
import { FingerprintChangedError } from '../../../src/core/platform/errors.js';
import { containment } from '../../../src/core/supervision/containment.js';
import { superviseCall, type TrustedIdentity } from '../../../src/core/supervision/supervisor.js';
import { trustAndEnable, useCoreSuite } from '../../support/core-suite.js';
import { NATIVE_FIXTURE_DIST, REPO, installPackage } from '../../support/data-dir.js';
import { installFixturePackage } from '../../support/manifest.js';

const byDescriptor = containment().mechanism === 'subreaper';

/** A script that, if it ever runs, leaves a mark next to itself; renamed over `target`. */
async function swapIn(target: string): Promise<string> {
  const mark = join(target, '..', 'swapped-in-ran');
  const impostor = `${target}.new`;
  await writeFile(impostor, `#!/bin/sh\necho ran > '${mark}'\n`);
  await chmod(impostor, 0o755);
  await rename(impostor, target);
  return mark;
}

/**
 * Opens `executable` as the host does, swaps other bytes in by rename, then
 * runs a health call from the descriptor; the outcome and the impostor's mark.
 */
async function healthAfterSwap(executable: string, dir: string, identity: TrustedIdentity) {
  const fd = openSync(executable, 'r');
  try {
    const mark = await swapIn(executable);
    const outcome = await superviseCall({
      executablePath: executable,
      executableFd: fd,
      arguments: [],
      packageDir: dir,
      identity,
      grants: ['project.metadata.read'],
      method: 'plugin.health',
      params: {},
    });
    return { outcome, mark };
  } finally {
    closeSync(fd);
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe.skipIf(!byDescriptor)('a swap right after verification runs nothing unverified', () => {
  const suite = useCoreSuite('exec-verified', {
    prepare: (dataDir) => installPackage(dataDir, NATIVE_FIXTURE_DIST, 'native-fixture'),
  });
  let core: Core;
  let dataDir: string;
  beforeAll(() => void ({ core, dataDir } = suite));

  it('swapped after the host opened the file: the verified bytes run, not the file the path names now', async () => {
    const dir = join(dataDir, 'plugins', 'native-fixture');
    const manifest = JSON.parse(await readFile(join(dir, 'plugin.json'), 'utf8')) as {
      id: string;
      name: string;
      version: string;
      capabilities: string[];
      requestedScopes: string[];
    };
    const { outcome, mark } = await healthAfterSwap(join(dir, 'native-fixture'), dir, manifest);
    expect(outcome.result.status).toBe('healthy');
    expect(await exists(mark)).toBe(false);
    await installPackage(dataDir, NATIVE_FIXTURE_DIST, 'native-fixture'); // the original back
  });

  it('a #! script swapped after the host opened it: its interpreter reads the verified script', async () => {
    const fields = {
      id: 'script-plugin',
      name: 'Script plugin',
      executable: 'confined-plugin.mjs',
      arguments: [],
      capabilities: ['project.inspect'],
      requestedScopes: ['project.metadata.read'],
    };
    const dir = await installFixturePackage(
      join(dataDir, 'plugins', 'script-plugin'),
      join(REPO, 'test', 'fixtures', 'confined-plugin.mjs'),
      fields,
    );
    const executable = join(dir, 'confined-plugin.mjs');
    // Node resolves the /dev/fd/<n> it is handed to the file's path: after a
    // swap, `<path> (deleted)`, a name another writer of the directory can plant.
    const planted = join(dir, 'planted-ran');
    await writeFile(`${executable} (deleted)`, `require('node:fs').writeFileSync('${planted}', 'ran');\n`);
    const { outcome, mark } = await healthAfterSwap(executable, dir, { ...fields, version: '1.0.0' });
    expect(outcome.result.status).toBe('healthy');
    expect(await exists(mark)).toBe(false);
    expect(await exists(planted)).toBe(false);
  });

  it('swapped between verification and start: the package changed, the plugin disabled, nothing started', async () => {
    await trustAndEnable(core, 'native-fixture', ['project.metadata.read']);
    const record = await core.plugins.authorize('native-fixture');
    await core.plugins.calls.verifyOnDisk(record);
    const executable = join(record.packageDir, record.executable);
    const mark = await swapIn(executable);
    const refused = await core.plugins.calls
      .callVerified(record, ['project.metadata.read'], 'plugin.health', {}, {})
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FingerprintChangedError);
    expect((refused as Error).message).toMatch(
      /^plugin native-fixture: files of its package changed on .+ since it was trusted \(native-fixture\); it was disabled/,
    );
    expect(await exists(mark)).toBe(false);
    expect(await core.plugins.show('native-fixture')).toMatchObject({ trust: 'changed', enabled: false });
  });
});
