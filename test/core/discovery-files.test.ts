// Discovery never blocks and never leaks (PROTOCOL §3 file types): FIFOs,
// sockets and devices where plugin.json or the executable should be are
// refused with their own error without being read; more than 100 packages is
// refused before anything is read or hashed; an error about a file that is
// not a manifest never quotes it; a world-writable directory gets a valid hint.
import { chmod, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { MAX_PACKAGES, discoverPackages } from '../../src/core/plugins/discovery.js';
import { PackageInvalidError } from '../../src/core/platform/errors.js';
import { trustAndEnable, useCoreSuite, useDataDir } from '../support/core-suite.js';
import { NATIVE_FIXTURE_DIST, installPackage } from '../support/data-dir.js';
import { testManifest as manifest, writeScriptPackage as writePackage } from '../support/manifest.js';
import {
  RUNS_AS_ROOT,
  mkfifo,
  mknodNull,
  releaseFifo,
  unixSocket,
  within,
} from '../support/special-files.js';

const SECRET = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY';

describe('discovery of package files that are not regular files', () => {
  const suite = useDataDir();
  let dataDir: string;
  let plugins: string;

  beforeAll(async () => {
    ({ dataDir, plugins } = suite);
    await writePackage(plugins, 'good', manifest('good'));
  });

  it('a FIFO as the executable is refused as a FIFO, and the other packages are discovered', async () => {
    const dir = await writePackage(plugins, 'fifo-exec', manifest('fifo-exec'));
    await rm(join(dir, 'run'));
    mkfifo(join(dir, 'run'));
    try {
      const found = await within(15_000, 'discovery', discoverPackages(plugins));
      expect(found.find((item) => item.id === 'good')!.error).toBeUndefined();
      expect(found.find((item) => item.id === 'fifo-exec')!.error).toBe(
        'executable: run is a FIFO (named pipe), not a regular file',
      );
    } finally {
      await releaseFifo(join(dir, 'run'));
      await rm(dir, { recursive: true });
    }
  });

  it('a unix socket as plugin.json or as the executable is refused as a socket', async () => {
    const asManifest = await writePackage(plugins, 'socket-manifest');
    const asExecutable = await writePackage(plugins, 'socket-exec', manifest('socket-exec'));
    await rm(join(asExecutable, 'run'));
    const servers = [
      await unixSocket(join(asManifest, 'plugin.json')),
      await unixSocket(join(asExecutable, 'run')),
    ];
    try {
      const found = await within(15_000, 'discovery', discoverPackages(plugins));
      expect(found.find((item) => item.id === 'good')!.error).toBeUndefined();
      expect(found.find((item) => item.id === 'socket-manifest')!.error).toBe(
        `${join(asManifest, 'plugin.json')} is a socket, not a regular file: plugin.json must be a regular file in the package (it was not read)`,
      );
      expect(found.find((item) => item.id === 'socket-exec')!.error).toBe(
        'executable: run is a socket, not a regular file',
      );
    } finally {
      for (const server of servers) await new Promise((resolve) => server.close(resolve));
      await rm(asManifest, { recursive: true, force: true });
      await rm(asExecutable, { recursive: true, force: true });
    }
  });

  it.skipIf(!RUNS_AS_ROOT)(
    'a character device as plugin.json is refused as a device (needs root)',
    async (ctx) => {
      const dir = await writePackage(plugins, 'device');
      try {
        if (!mknodNull(join(dir, 'plugin.json'))) return ctx.skip('mknod is not permitted here');
        const found = await discoverPackages(plugins);
        expect(found.find((item) => item.id === 'device')!.error).toMatch(
          /plugin\.json is a character device/,
        );
      } finally {
        await rm(dir, { recursive: true });
      }
    },
  );

  it('a plugin.json symlinked to a secret file outside the package is refused without quoting it', async () => {
    const secretFile = join(dataDir, 'secrets.env');
    await writeFile(secretFile, `${SECRET}\n`);
    const dir = await writePackage(plugins, 'leaky');
    await symlink(secretFile, join(dir, 'plugin.json'));
    try {
      const leaky = (await discoverPackages(plugins)).find((item) => item.id === 'leaky')!;
      expect(leaky.error).toMatch(/plugin\.json is a symlink, not a regular file/);
      expect(JSON.stringify(leaky)).not.toMatch(/AWS_SECRET|wJalr|EXAMPLEKEY/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('a plugin.json that is not JSON: the error says where it broke, never what it holds', async () => {
    const dir = await writePackage(plugins, 'not-json', `${SECRET}\n`);
    await writePackage(plugins, 'trailing', `${manifest('trailing')} ${SECRET}`);
    try {
      const found = await discoverPackages(plugins);
      const notJson = found.find((item) => item.id === 'not-json')!;
      const trailing = found.find((item) => item.id === 'trailing')!;
      expect(notJson.error).toMatch(/plugin\.json: not exactly one valid JSON document \(not JSON\)$/);
      expect(trailing.error).toMatch(/not exactly one valid JSON document \(invalid at (character|line)/);
      expect(JSON.stringify([notJson, trailing])).not.toMatch(/AWS_SECRET|wJalr|EXAMPLEKEY/);
    } finally {
      await rm(dir, { recursive: true });
      await rm(join(plugins, 'trailing'), { recursive: true });
    }
  });

  it('a world-writable directory is named with a valid chmod hint (o-w, not w-w)', async () => {
    const dir = await writePackage(plugins, 'open-dir', manifest('open-dir'));
    await chmod(dir, 0o777);
    try {
      const found = await discoverPackages(plugins);
      expect(found.find((item) => item.id === 'open-dir')!.error).toBe(
        `executable: the directory ${dir} is world-writable (chmod o-w it): others could replace the plugin between its verification and its start`,
      );
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it(`more than ${MAX_PACKAGES} packages is refused before any plugin.json is read or executable hashed`, async () => {
    const crowded = join(dataDir, 'crowded');
    const files: string[] = [];
    for (let index = 0; index <= MAX_PACKAGES; index += 1) {
      const dir = await writePackage(crowded, `p${index}`, manifest(`p${index}`));
      files.push(join(dir, 'plugin.json'), join(dir, 'run'));
    }
    // With relatime, reading a file whose atime is older than its mtime moves its atime.
    const longAgo = new Date('2001-01-01T00:00:00Z');
    const backdate = (file: string) => stat(file).then((stats) => utimes(file, longAgo, stats.mtime));
    const atimes = () => Promise.all(files.map(async (file) => (await stat(file)).atimeMs));
    const probe = join(dataDir, 'atime-probe');
    await writeFile(probe, 'x');
    await backdate(probe);
    await readFile(probe);
    const atimeMoves = (await stat(probe)).atimeMs !== longAgo.getTime();
    await Promise.all(files.map(backdate));

    const started = performance.now();
    await expect(discoverPackages(crowded)).rejects.toThrow(
      `${crowded} holds 101 plugin packages; at most 100 are allowed (remove some)`,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    if (!atimeMoves) {
      console.warn('this file system does not update atime on read: only the time bound was checked');
      return;
    }
    const after = await atimes();
    expect(files.filter((_, index) => after[index] !== longAgo.getTime())).toEqual([]);
  });
});

describe('refresh and calls with a FIFO where plugin.json should be', () => {
  const suite = useCoreSuite('discovery-files', {
    prepare: (dataDir) => installPackage(dataDir, NATIVE_FIXTURE_DIST, 'native-fixture'),
  });
  let core: Core;
  let dataDir: string;
  const fifos: string[] = [];

  beforeAll(() => void ({ core, dataDir } = suite));
  // Registered after the suite's hooks, so it runs before the core is closed.
  afterAll(async () => {
    for (const fifo of fifos) await releaseFifo(fifo);
  });

  it('refresh returns promptly: that package unavailable with its own error, the others available', async () => {
    const dir = await writePackage(join(dataDir, 'plugins'), 'fifo-manifest');
    fifos.push(join(dir, 'plugin.json'));
    mkfifo(join(dir, 'plugin.json'));
    const listed = await within(15_000, 'plugin refresh', core.plugins.refresh('user:test'));
    expect(listed.map((plugin) => [plugin.id, plugin.available])).toEqual([
      ['fifo-manifest', false],
      ['native-fixture', true],
    ]);
    expect(listed[0]!.error).toBe(
      `${join(dir, 'plugin.json')} is a FIFO (named pipe), not a regular file: plugin.json must be a regular file in the package (it was not read)`,
    );
    await rm(dir, { recursive: true });
  });

  it('plugin.json replaced by a FIFO after enable: the next call is refused promptly, before any start', async () => {
    await trustAndEnable(core, 'native-fixture', ['project.metadata.read']);
    const manifestPath = join(dataDir, 'plugins', 'native-fixture', 'plugin.json');
    await rm(manifestPath);
    mkfifo(manifestPath);
    fifos.push(manifestPath);
    const refused = await within(15_000, 'the health call', core.plugins.health('native-fixture')).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PackageInvalidError);
    expect((refused as Error).message).toMatch(/plugin\.json is a FIFO \(named pipe\), not a regular file/);
    const after = await core.plugins.show('native-fixture');
    expect(after.available).toBe(false);
    expect(after.error).toMatch(/is a FIFO/);
  });
});
