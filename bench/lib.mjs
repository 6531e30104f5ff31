// Shared set-up for the benchmarks: an owned redis-server on a free port in a
// temp dir (never the shared 6379), a temp data dir with plugin packages
// installed, trusted and enabled through the core services, projects, and
// real worker processes (dist/cli/main.js worker). Everything started here is
// remembered and stopped by cleanup(), also on Ctrl-C or an uncaught error.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../dist/core/redis/index.js';
import { createRuntime } from '../dist/core/runtime/index.js';

/** @typedef {import('../dist/core/runtime/index.js').Runtime} Runtime */
/** @typedef {import('../dist/core/redis/index.js').AppendFsync} AppendFsync */
/** @typedef {import('../dist/core/work/batches/index.js').BatchView} BatchView */
/** @typedef {import('../dist/core/work/batches/index.js').ProjectOutcome} ProjectOutcome */
/** @typedef {{ ms: number, calls: number, failures: number, selfUserMs: number, selfSysMs: number, childUserMs: number, childSysMs: number }} MinimalHostReport */
/**
 * A package to install: copied from `from` into <data-dir>/plugins/<name>,
 * then (unless `enable` is false) trusted and enabled as plugin `id`.
 * @typedef {{ name: string, from: string, id: string, scopes?: string[], enable?: boolean, prepare?: (dir: string) => Promise<void> }} BenchPackage
 */
/** @typedef {{ dataDir: string, prefix: string, runtime: Runtime, dirs: Record<string, string>, projectsDir: string }} Installation */
/** @typedef {{ url: string, pid: number | undefined, dir: string, stop: () => Promise<void> }} BenchRedis */
/** @typedef {{ pid: number, child: import('node:child_process').ChildProcess, stop: () => Promise<void>, output: () => string }} BenchWorker */

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const CLI = join(REPO, 'dist', 'cli', 'main.js');
export const NATIVE_FIXTURE_DIST = join(REPO, 'examples', 'plugins', 'native-fixture', 'dist');
export const FIXTURE_INSPECTOR_DIST = join(REPO, 'examples', 'plugins', 'fixture-inspector', 'dist');
export const FAULT_PLUGIN = join(REPO, 'test', 'fixtures', 'fault-plugin.mjs');
export const ACTOR = 'user:bench';
export const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];

/** @type {(() => unknown)[]} */
const cleanups = [];
/** @type {Promise<void> | undefined} */
let cleaning;

/** Runs every registered clean-up once, newest first. */
export function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const step = cleanups.pop();
      try {
        await step?.();
      } catch {
        // best effort: keep cleaning
      }
    }
  })();
  return cleaning;
}

/** @param {() => unknown} step */
export function onCleanup(step) {
  cleanups.push(step);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}
process.on('uncaughtException', (error) => {
  console.error(error);
  void cleanup().finally(() => process.exit(1));
});

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(address.port));
    });
  });
}

/**
 * An api process of `install` on a free port, stopped at cleanup; resolves once /healthz answers.
 * @param {{ dataDir: string, prefix: string }} install
 * @param {string} redisUrl
 * @param {{ stdio?: import('node:child_process').StdioOptions }} [options]
 */
export async function startApi(install, redisUrl, options = {}) {
  const port = await freePort();
  const args = [CLI, '--data-dir', install.dataDir, '--redis-url', redisUrl, '--prefix', install.prefix];
  const api = spawn(process.execPath, [...args, 'api', '--port', String(port)], {
    stdio: options.stdio ?? 'ignore',
  });
  onCleanup(() => api.kill('SIGTERM'));
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 300; tries++) {
    const up = await globalThis.fetch(`${base}/healthz`).catch(() => undefined);
    await up?.arrayBuffer();
    if (up) return { api, port, base };
    await sleep(100);
  }
  throw new Error(`the api on port ${port} never answered /healthz`);
}

/**
 * An owned redis-server: AOF on (the embedded default is everysec), no RDB
 * snapshots, in its own temp dir. transport 'tcp' (free port) or 'unix'.
 * @param {{ appendfsync?: AppendFsync, transport?: 'tcp' | 'unix' }} [options]
 * @returns {Promise<BenchRedis>}
 */
export async function startRedis({ appendfsync = 'everysec', transport = 'tcp' } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-redis-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const server = await startRedisServer({
    dir,
    ...(transport === 'tcp' ? { port: await freePort() } : { unixSocket: join(dir, 'redis.sock') }),
    appendfsync,
    readyTimeoutMs: 10_000,
  });
  const stop = async () => {
    await server.kill();
    await rm(dir, { recursive: true, force: true });
  };
  onCleanup(stop);
  return { url: server.url, pid: server.pid, dir, stop };
}

/** A plain client for the benchmark's own reads (INFO, pipelines). */
/** @param {string} url */
export function connect(url) {
  const match = /^(?:redis\+)?unix:\/\/(.+)$/.exec(url);
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null };
  const client = match ? new Redis({ ...options, path: match[1] }) : new Redis(url, options);
  client.on('error', () => {});
  return client;
}

/**
 * A data dir with the given packages copied into <data-dir>/plugins/<name>,
 * discovered, trusted at their fingerprint and enabled with the given scopes,
 * all through the core services of a front runtime (returned).
 * @param {string} redisUrl
 * @param {BenchPackage[]} packages
 * @param {{ prefix?: string }} [options]
 * @returns {Promise<Installation>}
 */
export async function makeInstallation(redisUrl, packages, { prefix = 'bench' } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-data-'));
  onCleanup(() => rm(dataDir, { recursive: true, force: true }));
  await mkdir(join(dataDir, 'plugins'));
  /** @type {Record<string, string>} */
  const dirs = {};
  for (const pkg of packages) {
    const target = join(dataDir, 'plugins', pkg.name);
    await cp(pkg.from, target, { recursive: true });
    if (pkg.prepare) await pkg.prepare(target);
    dirs[pkg.name] = target;
  }
  const runtime = await createRuntime({ dataDir, redisUrl, prefix, processActor: 'bench-front' });
  onCleanup(() => runtime.close());
  await runtime.plugins.refresh(ACTOR);
  for (const pkg of packages) {
    if (pkg.enable === false) continue;
    await trustAndEnable(runtime, pkg.id, pkg.scopes ?? ['project.metadata.read', 'project.files.read']);
  }
  const projectsDir = join(dataDir, 'projects');
  await mkdir(projectsDir);
  return { dataDir, prefix, runtime, dirs, projectsDir };
}

/**
 * @param {Runtime} runtime
 * @param {string} id
 * @param {string[]} scopes
 */
export async function trustAndEnable(runtime, id, scopes) {
  const { fingerprint } = await runtime.plugins.show(id);
  if (fingerprint === null) throw new Error(`plugin ${id} has no fingerprint to trust (an invalid package?)`);
  await runtime.plugins.trust(id, fingerprint, ACTOR);
  await runtime.plugins.enable(id, scopes, ACTOR);
}

/**
 * `count` trusted projects, all pointing at one real directory — or, with
 * `eachRoot`, each at its own empty `<projectsDir>/<id>` (what the minimal
 * host's `--roots <projectsDir>` sends for the default `p` prefix). Records are
 * written straight into the projects hash with a pipeline (set-up only: the
 * service's add() audits each one and is not what is being measured).
 * @param {Installation} installation
 * @param {number} count
 * @param {{ idPrefix?: string, eachRoot?: boolean }} [options]
 */
export async function addProjects(installation, count, { idPrefix = 'p', eachRoot = false } = {}) {
  const shared = join(installation.projectsDir, 'shared');
  if (!eachRoot) await mkdir(shared, { recursive: true });
  const { redis, keys } = installation.runtime;
  /** @type {string[]} */
  const ids = [];
  for (let start = 0; start < count; start += 10_000) {
    const pipeline = redis.pipeline();
    for (let index = start; index < Math.min(count, start + 10_000); index += 1) {
      const id = `${idPrefix}${String(index).padStart(6, '0')}`;
      ids.push(id);
      const root = eachRoot ? join(installation.projectsDir, id) : shared;
      if (eachRoot) await mkdir(root);
      pipeline.hset(keys.projects, id, JSON.stringify({ id, displayName: id, root, trusted: true }));
    }
    await pipeline.exec();
  }
  return ids;
}

/**
 * One real worker process (`node dist/cli/main.js … worker`), resolved once it logs worker-ready.
 * @param {Installation} installation
 * @param {string} redisUrl
 * @param {number} concurrency
 * @param {string[]} [extra] more worker options
 * @param {{ nodeArgs?: string[] }} [options]
 * @returns {Promise<BenchWorker>}
 */
export async function startWorker(installation, redisUrl, concurrency, extra = [], { nodeArgs = [] } = {}) {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      CLI,
      '--data-dir',
      installation.dataDir,
      '--redis-url',
      redisUrl,
      '--prefix',
      installation.prefix,
      'worker',
      '--concurrency',
      String(concurrency),
      '--log-level',
      'info',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  /** @param {Buffer} chunk */
  const onData = (chunk) => {
    output += chunk.toString();
    if (output.length > 100_000) output = output.slice(-50_000);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const done = await Promise.race([exited, sleep(15_000).then(() => undefined)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  onCleanup(stop);
  const deadline = Date.now() + 20_000;
  while (!output.includes('"event":"worker-ready"')) {
    if (child.exitCode !== null) throw new Error(`worker exited before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker not ready within 20 s:\n${output}`);
    await sleep(20);
  }
  return { pid: /** @type {number} */ (child.pid), child, stop, output: () => output };
}

/**
 * Creates a batch and resolves when it is finished (pub/sub, with a poll as fallback).
 * @param {Installation} installation
 * @param {string} pluginId
 * @param {Parameters<Runtime['batches']['create']>[1]} selection
 * @param {{ onProgress?: (view: BatchView) => void, pollMs?: number }} [options]
 */
export async function runBatch(installation, pluginId, selection, { onProgress, pollMs = 250 } = {}) {
  const { batches } = installation.runtime;
  const started = performance.now();
  const batch = await batches.create(pluginId, selection, ACTOR);
  const enqueuedMs = performance.now() - started;
  for (;;) {
    const view = await batches.store.get(batch.batchId, { results: false });
    if (!view) throw new Error(`batch ${batch.batchId} disappeared while it ran`);
    onProgress?.(view);
    if (view.state !== 'running') {
      return { batch: view, ms: performance.now() - started, enqueuedMs };
    }
    await sleep(pollMs);
  }
}

/**
 * Runs each variant once per round, the order rotated each round so background load hits them alike.
 * @param {Record<string, () => Promise<number>>} variants each resolves to its wall ms
 * @param {number} rounds
 * @param {(ms: number) => string} said what one run's ms says, on its progress line (stderr)
 * @returns {Promise<{ times: Record<string, number[]>, loads: string[] }>} ms per variant by round; the load average as each round began
 */
export async function rotatedRounds(variants, rounds, said) {
  const names = Object.keys(variants);
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(names.map((name) => [name, []]));
  /** @type {string[]} */
  const loads = [];
  for (let round = 0; round < rounds; round += 1) {
    const order = names.map((_, index) => names[(index + round) % names.length]);
    loads.push(await loadAverage());
    for (const name of order) {
      const ms = await variants[name]();
      times[name].push(ms);
      console.error(`round ${round + 1}/${rounds} ${name}: ${said(ms)}`);
    }
  }
  return { times, loads };
}

/**
 * Runs `task(index)` for index 0..count-1 with at most `concurrency` at once.
 * @param {number} count
 * @param {number} concurrency
 * @param {(index: number) => Promise<unknown>} task
 */
export async function pool(count, concurrency, task) {
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await task(index);
    }
  });
  await Promise.all(runners);
}

/**
 * Bare spawn: start the executable, close its stdin, wait for its exit (no protocol).
 * @param {string} executable
 * @param {string} cwd
 */
export function bareSpawn(executable, cwd) {
  return new Promise(
    /** @param {(value?: void) => void} resolve */ (resolve, reject) => {
      const child = spawn(executable, [], { cwd, stdio: ['pipe', 'ignore', 'ignore'] });
      child.once('error', reject);
      child.once('exit', () => resolve());
      child.stdin.end();
    },
  );
}

/**
 * @param {number[]} values
 * @param {number} p
 * @returns {number}
 */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return /** @type {number} */ (sorted[rank]);
}

export const median = (/** @type {number[]} */ values) => percentile(values, 50);

/**
 * @param {number} ms
 * @returns {Promise<void>}
 */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function loadAverage() {
  const text = await readFile('/proc/loadavg', 'utf8').catch(() => '');
  return text.split(' ').slice(0, 3).join(' ');
}

/** A line describing the machine's state, printed with each result. */
export async function machineNote() {
  const { cpus } = await import('node:os');
  return `${cpus().length} CPUs, load average at start: ${await loadAverage()}`;
}

/**
 * @param {string[]} header
 * @param {unknown[][]} rows
 */
export function table(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/**
 * utime + stime of one process in ms (/proc/<pid>/stat; clock ticks of 10 ms), undefined when it is gone.
 * @param {number} pid
 */
export async function processCpuMs(pid) {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * cutime + cstime in ms: CPU of the reaped children of `pid` (and of theirs), undefined when it is gone.
 * @param {number} pid
 */
export async function reapedChildrenCpuMs(pid) {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * Pids of the direct children of `pid` whose command name is `comm` (e.g. the sy-spawner helper).
 * @param {number} pid
 * @param {string} comm
 */
export async function childrenNamed(pid, comm) {
  const { readdir } = await import('node:fs/promises');
  /** @type {number[]} */
  const found = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const close = text.lastIndexOf(')');
    if (close < 0) continue;
    const name = text.slice(text.indexOf('(') + 1, close);
    const ppid = Number(text.slice(close + 2).split(' ')[1]);
    if (ppid === pid && name === comm) found.push(Number(entry));
  }
  return found;
}

/**
 * CPU ms of a worker process plus its spawn helper(s), the host's share of its calls; `calls` is the call
 * trees' CPU: the keepers (each helper's serving keepers, alive, and those it reaped) and the plugins they reaped.
 * @param {number} pid
 */
export async function hostCpuMs(pid) {
  const own = (await processCpuMs(pid)) ?? 0;
  let helpers = 0;
  let calls = 0;
  for (const helper of await childrenNamed(pid, 'sy-spawner')) {
    helpers += (await processCpuMs(helper)) ?? 0;
    calls += (await reapedChildrenCpuMs(helper)) ?? 0; // keepers it reaped, with their plugins
    // A serving keeper lives across calls and is never reaped: its own CPU and its reaped plugins, read live.
    for (const keeper of await childrenNamed(helper, 'sy-keeper'))
      calls += ((await processCpuMs(keeper)) ?? 0) + ((await reapedChildrenCpuMs(keeper)) ?? 0);
  }
  return { own, helpers, total: own + helpers, calls };
}

/**
 * The minimal-host baseline (bench/minimal-host.c), compiled once into a temp
 * dir with the machine's cc: posix_spawn, the two lines, reap; `concurrency` threads.
 */
export async function buildMinimalHost() {
  const { execFileSync } = await import('node:child_process');
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-minimal-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const binary = join(dir, 'minimal-host');
  execFileSync(process.env.CC ?? 'cc', [
    '-O2',
    '-pthread',
    '-o',
    binary,
    join(REPO, 'bench', 'minimal-host.c'),
  ]);
  return binary;
}

/**
 * Runs `calls` plugin calls through the minimal host; its JSON report (wall ms, rusage of self and children).
 * @param {string} binary
 * @param {string} executable
 * @param {string} cwd
 * @param {number} calls
 * @param {number} concurrency
 * @param {Record<string, string>} env
 * @param {{ roots?: string }} [options] roots: send each project `"root":"<roots>/p<index>"` and grant
 *   project.files.read too (the minimal host's `--roots`)
 * @returns {Promise<MinimalHostReport>}
 */
export async function runMinimalHost(binary, executable, cwd, calls, concurrency, env, { roots } = {}) {
  const { execFile } = await import('node:child_process');
  const pairs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  const options = roots === undefined ? [] : ['--roots', roots];
  /** @type {string} */
  const stdout = await new Promise((resolve, reject) =>
    execFile(
      binary,
      [...options, executable, cwd, String(calls), String(concurrency), ...pairs],
      (error, out) => (error ? reject(error) : resolve(out)),
    ),
  );
  const report = JSON.parse(stdout);
  if (report.failures > 0) throw new Error(`minimal host: ${report.failures} of ${calls} calls failed`);
  return report;
}

/**
 * The request lines the minimal host writes for project `p<index>` (bench/minimal-host.c, byte for byte),
 * with `roots` as its `--roots <roots>`.
 * @param {string} index six digits
 * @param {string} [roots]
 */
export function minimalHostRequest(index, roots) {
  if (roots !== undefined)
    return (
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"switchyard.plugin/v1",' +
      '"hostVersion":"minimal-host","grantedScopes":["project.metadata.read","project.files.read"]}}\n' +
      `{"jsonrpc":"2.0","id":2,"method":"project.inspect","params":{"project":{"id":"p${index}","displayName":"p${index}","root":"${roots}/p${index}"}}}\n`
    );
  return (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"switchyard.plugin/v1",' +
    '"hostVersion":"minimal-host","grantedScopes":["project.metadata.read"]}}\n' +
    `{"jsonrpc":"2.0","id":2,"method":"project.inspect","params":{"project":{"id":"p${index}","displayName":"p${index}"}}}\n`
  );
}

/**
 * Whether a shell peer's tool is on PATH; for `parallel`, it must be GNU parallel (moreutils ships another).
 * @param {'xargs' | 'parallel'} tool
 * @returns {Promise<string | undefined>} its version line, or undefined when missing
 */
export async function shellPeerVersion(tool) {
  const { execFile } = await import('node:child_process');
  /** @type {string | undefined} */
  const line = await new Promise((resolve) =>
    execFile(tool, ['--version'], { timeout: 20_000 }, (error, out) =>
      resolve(error ? undefined : out.split('\n')[0]),
    ),
  );
  if (line === undefined) return undefined;
  if (tool === 'parallel' && !line.startsWith('GNU parallel')) return undefined;
  return line;
}

/**
 * A shell user's way to run the batch: `xargs -P<n>` or GNU `parallel -j<n>`
 * runs, per project, `sh call.sh <index>`, which pipes the minimal host's two
 * request lines (printf) into the executable started in its package directory,
 * its stdout into one file per project. Every file is then read: the call
 * counts only when its second line is the inspect result for that project, so
 * a failed call cannot pass as a fast one.
 * @param {'xargs' | 'parallel'} tool
 * @param {string} executable
 * @param {string} cwd
 * @param {number} calls
 * @param {number} concurrency
 * @param {Record<string, string>} env the plugin environment (plus HOME: GNU parallel keeps its state there)
 * @returns {Promise<{ ms: number, calls: number, failures: number }>}
 */
export async function runShellPeer(tool, executable, cwd, calls, concurrency, env) {
  const { readdir, writeFile } = await import('node:fs/promises');
  const dir = await mkdtemp(join(tmpdir(), `switchyard-bench-${tool}-`));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  await mkdir(out);
  /** @param {string} text */
  const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
  const [init, inspect] = minimalHostRequest('@').split('\n');
  // The project index goes where the template has '@' (twice: id and displayName).
  const [before, middle, rest] = inspect.split('@');
  const script = join(dir, 'call.sh');
  await writeFile(
    script,
    `cd ${quote(cwd)} || exit 1\n` +
      `printf '%s\\n' ${quote(init)} ${quote(before)}"$1"${quote(middle)}"$1"${quote(rest)}` +
      ` | ${quote(executable)} > ${quote(out)}/"$1" 2>/dev/null\n`,
  );
  const indexes = join(dir, 'indexes');
  await writeFile(
    indexes,
    Array.from({ length: calls }, (_, index) => `${String(index).padStart(6, '0')}\n`).join(''),
  );
  const argv =
    tool === 'xargs'
      ? ['-P', String(concurrency), '-n', '1', '-a', indexes, 'sh', script]
      : ['-j', String(concurrency), '--will-cite', '-a', indexes, 'sh', script];
  const started = performance.now();
  const code = await new Promise((resolve, reject) => {
    const child = spawn(tool, argv, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (status) => resolve(status));
  });
  const ms = performance.now() - started;
  let succeeded = 0;
  for (const name of await readdir(out)) {
    const lines = (await readFile(join(out, name), 'utf8')).split('\n');
    try {
      const second = JSON.parse(lines[1]);
      if (second.id === 2 && second.result?.facts?.[0]?.value === `p${name}`) succeeded += 1;
    } catch {
      // not a result: counted as a failure below
    }
  }
  await rm(out, { recursive: true, force: true });
  if (code !== 0 || succeeded !== calls)
    throw new Error(`${tool}: exit ${code}, ${succeeded} of ${calls} calls answered with their result`);
  return { ms, calls, failures: calls - succeeded };
}

/**
 * Copies the native fixture into `dir` and returns a function making one `plugin.health` call of it through
 * `superviseCall` (of whichever build the caller imported), started from a descriptor as a worker does:
 * `confined` with the default per-call policy (no network, the given limits), else signal scoping only.
 * @param {string} dir
 * @param {{ superviseCall: (spec: any) => Promise<unknown>, limits: unknown, fixtureDist?: string }} build
 * @returns {Promise<(confined?: boolean) => Promise<unknown>>}
 */
export async function healthCaller(dir, { superviseCall, limits, fixtureDist = NATIVE_FIXTURE_DIST }) {
  const packageDir = join(dir, 'native-fixture');
  await cp(fixtureDist, packageDir, { recursive: true });
  const manifest = JSON.parse(await readFile(join(packageDir, 'plugin.json'), 'utf8'));
  const executablePath = join(packageDir, manifest.executable);
  const policy = { network: 'none', allowRead: [], allowWrite: [], limits };
  return async (confined = true) => {
    const executableFd = openSync(executablePath, 'r');
    try {
      return await superviseCall({
        executablePath,
        executableFd,
        arguments: [],
        packageDir,
        identity: manifest,
        grants: ['project.metadata.read'],
        method: 'plugin.health',
        params: {},
        ...(confined ? { policy } : {}),
      });
    } finally {
      closeSync(executableFd);
    }
  };
}
