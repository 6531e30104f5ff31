// Kernel confinement per call (docs/PROTOCOL.md §9.5, §11), with real
// processes: a trusted plugin that tries what it was never granted — the
// project without project.files.read, writing it during an inspection, $HOME,
// the data directory, outside its scratch directory, the test's Redis by TCP
// and by unix socket, a loopback listener — is refused by the kernel; with
// `network: allow` the same connect succeeds; going over a memory, CPU, file
// size or process limit ends the call with RESOURCE_LIMIT and nothing else is
// affected. Python (through a pyenv-style shim when there is one) and native
// plugins still run confined. Under SWITCHYARD_CONFINEMENT=off the host says
// what is missing, and --require-confinement refuses.
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { ConfinementUnavailableError } from '../../../src/core/platform/errors.js';
import { startRedisServer, type RedisServer } from '../../../src/core/redis/redis-server.js';
import { CONFINEMENT_ENV, containment, startCallProcess } from '../../../src/core/supervision/containment.js';
import type { ConfinementSettings } from '../../../src/core/plugins/confinement-settings.js';
import { trustAndEnable, useCoreSuite } from '../../support/core-suite.js';
import { REPO } from '../../support/data-dir.js';
import { installFixturePackage } from '../../support/manifest.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'confined-plugin.mjs');
const PYTHON_FIXTURE = join(REPO, 'test', 'fixtures', 'python-plugin.py');
const NATIVE_FIXTURE = join(REPO, 'examples', 'plugins', 'native-fixture', 'dist');
const ACTOR = 'user:test';
const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const state = containment();
const confined =
  state.mechanism === 'subreaper' && !state.missing.some((item) => /Landlock|seccomp/.test(item));
/** A write outside the granted paths: the call's read-only mount refuses it first (EROFS) where it has one, else Landlock. */
const REFUSED_WRITE = expect.stringMatching(/^(EACCES|EROFS)$/);
const enforced = (what: RegExp) => state.enforced.some((item) => what.test(item));

const suite = useCoreSuite('confinement');
let serial = 0;
let projectRoot: string;
let listener: Server;
/** A real redis-server listening only on a unix socket, as the embedded one does. */
let redisOnSocket: RedisServer;
let unixPath: string;
let homeSecret: string;

function listen(server: Server, target: number | string): Promise<void> {
  return new Promise((resolve) => {
    if (typeof target === 'number') server.listen(target, '127.0.0.1', resolve);
    else server.listen(target, resolve);
  });
}

beforeAll(async () => {
  projectRoot = join(suite.dataDir, 'projects', 'demo');
  await mkdir(projectRoot, { recursive: true });
  await writeFile(join(projectRoot, 'README'), 'project text\n');
  await writeFile(join(suite.dataDir, 'secret-in-data-dir'), 'data dir secret\n');
  homeSecret = join(homedir(), `.switchyard-confinement-test-${process.pid}`);
  await writeFile(homeSecret, 'home secret\n', { mode: 0o600 });
  await suite.core.projects.add(projectRoot, { id: 'demo', trust: true }, ACTOR);
  listener = createServer((socket) => socket.end());
  await listen(listener, 0);
  unixPath = join(suite.dataDir, 'redis-unix', 'redis.sock');
  redisOnSocket = await startRedisServer({ dir: join(suite.dataDir, 'redis-unix'), unixSocket: unixPath });
});
afterAll(async () => {
  listener.close();
  await redisOnSocket?.kill();
  await rm(homeSecret, { force: true });
});
afterEach(() => {
  delete process.env[CONFINEMENT_ENV];
});

type Attempt = Record<string, string | number | boolean>;

/** Redis's answer to PING over a unix socket, from this process. */
function pingOver(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      resolve(data.toString('latin1').trim());
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** A confined-plugin package trusted and enabled with these scopes and this policy. */
async function confinedPlugin(scopes: string[], settings: ConfinementSettings = { network: 'none' }) {
  const id = `confined-${++serial}`;
  const dir = await installFixturePackage(join(suite.plugins, id), FIXTURE, {
    id,
    name: 'Confined plugin',
    executable: 'confined-plugin.mjs',
    arguments: [],
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: ALL_SCOPES,
  });
  await trustAndEnable(suite.core, id, scopes, ACTOR, settings);
  return { id, dir };
}

async function inspectAttempts(plugin: { id: string; dir: string }, attempts: Attempt[]): Promise<string[]> {
  await writeFile(join(plugin.dir, 'attempts.json'), JSON.stringify(attempts));
  const result = await suite.core.plugins.inspect(plugin.id, 'demo');
  return result.facts.map((fact) => String(fact.value));
}

async function operateAttempts(plugin: { id: string }, attempts: Attempt[]): Promise<string[]> {
  const result = await suite.core.plugins.operate(plugin.id, 'demo', 'try', { attempts });
  return (result.output as { results: string[] }).results;
}

const redisPort = () => Number(new URL(suite.redis.url).port);

describe.skipIf(!confined)('files: what the review granted, nothing else', () => {
  it('without project.files.read the project root cannot be read', async () => {
    const plugin = await confinedPlugin(['project.metadata.read']);
    const results = await inspectAttempts(plugin, [
      { read: join(projectRoot, 'README') },
      { list: projectRoot },
      { read: join(plugin.dir, 'plugin.json') },
    ]);
    expect(results).toEqual(['EACCES', 'EACCES', expect.stringMatching(/^ok: /)]);
  });

  it('with project.files.read it reads the project but cannot write it during an inspection', async () => {
    const plugin = await confinedPlugin(['project.metadata.read', 'project.files.read']);
    const results = await inspectAttempts(plugin, [
      { read: join(projectRoot, 'README') },
      { write: join(projectRoot, 'planted') },
    ]);
    expect(results).toEqual(['ok: project text\n', REFUSED_WRITE]);
  });

  it('a project.operate call may write the project root', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES);
    const results = await operateAttempts(plugin, [{ write: join(projectRoot, 'operated') }]);
    expect(results).toEqual(['ok']);
  });

  it('no plugin reads $HOME or the data directory, or writes outside its scratch directory', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES);
    const results = await operateAttempts(plugin, [
      { read: homeSecret },
      { list: homedir() },
      { read: join(suite.dataDir, 'secret-in-data-dir') },
      { write: join(suite.dataDir, 'planted') },
      { write: join('/tmp', `planted-${process.pid}`) },
      { read: `/proc/${process.pid}/environ` },
      { tmpfile: 1 },
    ]);
    expect(results.slice(0, 6)).toEqual([
      'EACCES',
      'EACCES',
      'EACCES',
      REFUSED_WRITE,
      REFUSED_WRITE,
      'EACCES',
    ]);
    // Its own TMPDIR, private to the call.
    expect(results[6]).toMatch(/^ok: 1 MiB in \/.*sy-call-/);
  });

  it('a scratch directory left opened and full is private and empty again for the next call', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES);
    const [filled, opened] = await operateAttempts(plugin, [{ tmpfile: 1 }, { chmodTmp: 0o777 }]);
    expect(opened).toBe('ok');
    const used = /in (\/\S+)$/.exec(filled ?? '')?.[1];
    expect(used).toMatch(/sy-call-/);
    // The pool hands the directory just given back to the next call (last in, first out).
    const [state] = await operateAttempts(plugin, [{ tmpState: true }]);
    expect(state).toBe(`ok: ${used} mode 700, 0 entries`);
  });

  it('a plugin run by root has no capability: it cannot give a file away or make a disk device node', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES);
    const results = await operateAttempts(plugin, [{ chown: 'given-away' }, { mknod: 'disk' }]);
    if (process.getuid?.() === 0) expect(results).toEqual(['EPERM', expect.stringMatching(/^EPERM|EACCES$/)]);
    else expect(results[0]).toBe('EPERM'); // no capability to begin with
  });

  it('an admin’s allowRead path becomes readable, read-only', async () => {
    const shared = join(suite.dataDir, 'shared');
    await mkdir(shared, { recursive: true });
    await writeFile(join(shared, 'data'), 'shared data\n');
    const plugin = await confinedPlugin(ALL_SCOPES, { network: 'none', allowRead: [shared] });
    const results = await operateAttempts(plugin, [
      { read: join(shared, 'data') },
      { write: join(shared, 'data') },
    ]);
    expect(results).toEqual(['ok: shared data\n', REFUSED_WRITE]);
  });
});

describe.skipIf(!confined)('interpreters and children still run confined', () => {
  it('a Python plugin (its #! interpreter found on PATH, a pyenv shim here) runs, and cannot read $HOME', async () => {
    const id = `python-${++serial}`;
    const dir = await installFixturePackage(join(suite.plugins, id), PYTHON_FIXTURE, {
      id,
      name: 'Python plugin',
      executable: 'python-plugin.py',
      arguments: [],
      capabilities: ['project.inspect'],
      requestedScopes: ['project.metadata.read', 'project.files.read'],
    });
    await trustAndEnable(suite.core, id, ['project.metadata.read', 'project.files.read'], ACTOR, {
      network: 'none',
    });
    const results = await inspectAttempts({ id, dir }, [
      { read: join(projectRoot, 'README') },
      { read: homeSecret },
      { read: join(suite.dataDir, 'secret-in-data-dir') },
    ]);
    expect(results).toEqual(['ok: project text\n', 'EACCES', 'EACCES']);
  });

  it('a native plugin (C, dynamically linked: its loader reads the system libraries) runs confined', async () => {
    await cp(NATIVE_FIXTURE, join(suite.plugins, 'native-fixture'), { recursive: true });
    await trustAndEnable(suite.core, 'native-fixture', ['project.metadata.read'], ACTOR, { network: 'none' });
    const result = await suite.core.plugins.inspect('native-fixture', 'demo');
    expect(result.summary).toBe('native fixture inspected demo');
  });

  it('a Node plugin starts a child with piped stdio (a socketpair) and talks to it', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES, { network: 'none' });
    expect(await operateAttempts(plugin, [{ child: 'ping' }])).toEqual(['ok: ping']);
  });
});

describe.skipIf(!confined)('network: none unless an admin allowed it', () => {
  it("network none: neither the test's Redis (TCP, unix socket) nor a loopback listener, nor UDP", async () => {
    // The host itself reaches the Redis on the socket: a refusal is the plugin's confinement.
    expect(await pingOver(unixPath)).toBe('+PONG');
    const plugin = await confinedPlugin(ALL_SCOPES, { network: 'none' });
    const port = (listener.address() as { port: number }).port;
    const received = udpReceiver();
    const results = await operateAttempts(plugin, [
      { tcp: `127.0.0.1:${redisPort()}` },
      { tcp: `127.0.0.1:${port}` },
      { unix: unixPath },
      { udp: `127.0.0.1:${await received.port}` },
    ]);
    expect(results).toEqual(['EACCES', 'EACCES', 'EACCES', 'EACCES']);
    expect(received.datagrams).toEqual([]);
    received.close();
  });

  it('network allow: the same TCP connect succeeds; a unix socket by path stays refused', async () => {
    const plugin = await confinedPlugin(ALL_SCOPES, { network: 'allow' });
    const port = (listener.address() as { port: number }).port;
    const received = udpReceiver();
    const results = await operateAttempts(plugin, [
      { tcp: `127.0.0.1:${port}` },
      { unix: unixPath },
      { udp: `127.0.0.1:${await received.port}` },
    ]);
    expect(results).toEqual(['ok: connected', 'EACCES', 'ok: sent']);
    await expect.poll(() => received.datagrams).toEqual(['confined-plugin']);
    received.close();
  });
});

describe.skipIf(!confined)('resource limits end the call with RESOURCE_LIMIT, and only that call', () => {
  const overLimit = async (settings: ConfinementSettings, attempt: Attempt, limit: string) => {
    const plugin = await confinedPlugin(ALL_SCOPES, { network: 'none', ...settings });
    const good = await confinedPlugin(ALL_SCOPES);
    const [over, beside] = await Promise.allSettled([
      operateAttempts(plugin, [attempt]),
      operateAttempts(good, [{ read: join(good.dir, 'plugin.json') }]),
    ]);
    expect(over).toMatchObject({
      status: 'rejected',
      reason: { code: 'RESOURCE_LIMIT', limits: [limit] },
    });
    expect((over as PromiseRejectedResult).reason.message).toContain(`the ${limit} limit`);
    expect(beside).toMatchObject({ status: 'fulfilled' });
    expect((await suite.core.plugins.show(plugin.id)).health).toBe('unhealthy');
  };

  it('CPU time', () => overLimit({ cpuMs: 1_000 }, { cpu: true }, 'cpu'), 30_000);

  it(
    'file size: a 64 MiB file in its scratch directory with a 16 MiB limit',
    () => overLimit({ fileSizeBytes: 16 * 1024 ** 2 }, { tmpfile: 64 }, 'file size'),
    30_000,
  );

  it.skipIf(!enforced(/^memory limit \(cgroup/))(
    'memory: 1 GiB allocated under a 256 MiB limit',
    () => overLimit({ memoryBytes: 256 * 1024 ** 2 }, { memory: 1024 }, 'memory'),
    30_000,
  );

  it.skipIf(!enforced(/^process limit/))(
    'processes: 64 children under a limit of 16 (a fork bomb)',
    () => overLimit({ processes: 16 }, { processes: 64 }, 'processes'),
    30_000,
  );
});

describe.skipIf(!confined)('limits follow each call, call after call on the same keeper', () => {
  it('open files and file size: each call gets its own, up and down (sequential calls, one serving keeper)', async () => {
    const small = await confinedPlugin(ALL_SCOPES, {
      network: 'none',
      openFiles: 100,
      fileSizeBytes: 16 * 1024 ** 2,
    });
    const usual = await confinedPlugin(ALL_SCOPES);
    const tiny = await confinedPlugin(ALL_SCOPES, {
      network: 'none',
      openFiles: 32,
      fileSizeBytes: 2 * 1024 ** 2,
    });
    const seen: string[] = [];
    for (const plugin of [small, usual, tiny, small, usual])
      seen.push(...(await operateAttempts(plugin, [{ ulimits: true }])));
    const small_ = `ok: files 100/100 size ${(16 * 1024 ** 2) / 512}/${(16 * 1024 ** 2) / 512}`;
    const usual_ = `ok: files 1024/1024 size ${1024 ** 3 / 512}/${1024 ** 3 / 512}`;
    const tiny_ = `ok: files 32/32 size ${(2 * 1024 ** 2) / 512}/${(2 * 1024 ** 2) / 512}`;
    expect(seen).toEqual([small_, usual_, tiny_, small_, usual_]);
  }, 30_000);

  it.skipIf(!enforced(/^memory limit \(cgroup/))(
    'memory: the call after one that went over its limit is not blamed for it; the next one over is',
    async () => {
      const plugin = await confinedPlugin(ALL_SCOPES, { network: 'none', memoryBytes: 256 * 1024 ** 2 });
      const over = () => operateAttempts(plugin, [{ memory: 1024 }]);
      await expect(over()).rejects.toMatchObject({ code: 'RESOURCE_LIMIT', limits: ['memory'] });
      expect(await operateAttempts(plugin, [{ memory: 16 }])).toEqual(['ok: 16 MiB']);
      expect(await operateAttempts(plugin, [{ memory: 16 }])).toEqual(['ok: 16 MiB']);
      await expect(over()).rejects.toMatchObject({ code: 'RESOURCE_LIMIT', limits: ['memory'] });
    },
    60_000,
  );
});

describe.skipIf(state.mechanism !== 'subreaper')('saying what is enforced', () => {
  it('confined: every mechanism listed as enforced, nothing missing on this kernel', () => {
    expect(confined).toBe(true);
    for (const mechanism of [
      /^signal scoping/,
      /^file access rules/,
      /^network rules/,
      /^seccomp/,
      /^resource limits/,
      /^memory limit/,
      /^process limit/,
    ])
      expect(
        state.enforced.some((item) => mechanism.test(item)),
        String(mechanism),
      ).toBe(true);
    expect(state.missing).toEqual([]);
  });

  it(`${CONFINEMENT_ENV}=off: what is missing is named, and a call that requires confinement is refused`, async () => {
    const plugin = await confinedPlugin(ALL_SCOPES);
    process.env[CONFINEMENT_ENV] = 'off';
    const off = containment();
    expect(off.missing.join('\n')).toMatch(/kernel confinement \(SWITCHYARD_CONFINEMENT=off\)/);
    // Unconfined, the same read succeeds: the defence above is the kernel's, not the fixture's.
    const results = await operateAttempts(plugin, [{ read: homeSecret }]);
    expect(results).toEqual(['ok: home secret\n']);
    // A call that requires confinement (worker --require-confinement) starts nothing.
    const mark = join(suite.dataDir, `required-${process.pid}`);
    const refused = await startCallProcess({
      file: '/bin/sh',
      args: ['-c', `touch '${mark}'`],
      cwd: suite.dataDir,
      env: {},
      requireConfinement: true,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfinementUnavailableError);
    expect((refused as Error).message).toMatch(
      /requires kernel confinement \(--require-confinement\) and cannot provide: kernel confinement \(SWITCHYARD_CONFINEMENT=off\)/,
    );
    expect(existsSync(mark)).toBe(false);
  });
});

/** A UDP socket on loopback that keeps what it receives. */
function udpReceiver(): { port: Promise<number>; datagrams: string[]; close: () => void } {
  const socket = createSocket('udp4');
  const datagrams: string[] = [];
  socket.on('message', (message) => datagrams.push(message.toString()));
  const port = new Promise<number>((resolve) =>
    socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)),
  );
  return { port, datagrams, close: () => socket.close() };
}

describe.skipIf(!confined || process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv'))(
  'a root worker without CAP_SETPCAP (a hardened container)',
  () => {
    it('says a root plugin gets its capabilities back on exec, and still runs its calls', async () => {
      // A worker process started without CAP_SETPCAP in its bounding set: what it reports, and one call.
      const script = `
        const { containment } = await import(${JSON.stringify(join(REPO, 'dist/core/supervision/index.js'))});
        const { startCallProcess } = await import(${JSON.stringify(join(REPO, 'dist/core/supervision/containment.js'))});
        const call = await startCallProcess({ file: '/bin/sh', args: ['-c', 'echo ran'], cwd: '/', env: {} });
        let out = '';
        call.stdout.on('data', (chunk) => (out += chunk));
        await call.started;
        await call.exited;
        await call.end();
        console.log(JSON.stringify({ missing: containment().missing, out }));`;
      const { execFile } = await import('node:child_process');
      const said = await new Promise<string>((resolve, reject) =>
        execFile(
          '/usr/bin/setpriv',
          ['--bounding-set', '-setpcap', '--', process.execPath, '--input-type=module', '-e', script],
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
      const { missing, out } = JSON.parse(said.trim().split('\n').pop()!) as {
        missing: string[];
        out: string;
      };
      expect(missing.join('\n')).toMatch(/no capabilities for good: the worker lacks CAP_SETPCAP/);
      expect(out).toBe('ran\n');
    });
  },
);
