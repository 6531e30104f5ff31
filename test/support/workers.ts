// Real worker and scheduler processes for the queue fault tests: spawned from
// dist/cli/main.js against an owned Redis, each installation under its own
// prefix with the queue-plugin fixture trusted and enabled. Every process
// started here is remembered so afterEach can SIGKILL what a failed test left.
import { mkdir, readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BatchView } from '../../src/core/work/batches/batch-store.js';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { createRuntime, type Runtime } from '../../src/core/runtime/runtime.js';
import {
  ProcessTracker,
  completion,
  globalArgs,
  kill9,
  spawnCliProcess,
  untilLogged,
  type CliProcess,
} from './cli-process.js';
import { REPO, makeDataDir, uniquePrefix } from './data-dir.js';
import { setConfinement, trustAndEnable } from './core-suite.js';
import { installFixturePackage } from './manifest.js';
import { isAlive, killAll } from './processes.js';
import { sleep, waitFor } from './wait.js';

export const QUEUE_PLUGIN = join(REPO, 'test', 'fixtures', 'queue-plugin.mjs');
export const PLUGIN_ID = 'queue-plugin';
export const ACTOR = 'user:queue-test';
const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];

export interface Installation {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  packageDir: string;
  projectsDir: string;
  runtime: Runtime;
  /** Adds (and by default trusts) a project directory `name` under projectsDir. */
  addProject(name: string, options?: { trust?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** The queue-plugin package in <dataDir>/plugins (not yet discovered, trusted or enabled); its directory. */
export function installQueuePlugin(dataDir: string): Promise<string> {
  return installFixturePackage(join(dataDir, 'plugins', PLUGIN_ID), QUEUE_PLUGIN, {
    id: PLUGIN_ID,
    name: 'Queue fault plugin',
    executable: 'queue-plugin.mjs',
    arguments: [],
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: ALL_SCOPES,
  });
}

/** A data dir with the fixture installed, a fresh prefix, the plugin trusted and enabled with every scope. */
export async function createInstallation(redisUrl: string, name: string): Promise<Installation> {
  const { dataDir, cleanup } = await makeDataDir();
  const packageDir = await installQueuePlugin(dataDir);
  const projectsDir = join(dataDir, 'projects');
  await mkdir(projectsDir);
  const prefix = uniquePrefix(name);
  const runtime = await createRuntime({ dataDir, redisUrl, prefix, processActor: 'test-front' });
  // Redis may be killed on purpose; the queues reconnect, their errors are expected.
  for (const queue of [
    runtime.queues.inspect,
    runtime.queues.operate,
    runtime.queues.health,
    runtime.queues.maintenance,
    runtime.queues.notify,
  ])
    queue.on('error', () => {});
  await trustAndEnable(runtime, PLUGIN_ID, ALL_SCOPES, ACTOR);
  // The fixture finds the worker that started it (its HOST_PID) through /proc,
  // which a confined call may not read otherwise; the tests match pids with it.
  await setConfinement(runtime, PLUGIN_ID, { allowRead: ['/proc'] });
  return {
    dataDir,
    redisUrl,
    prefix,
    packageDir,
    projectsDir,
    runtime,
    async addProject(project, options = {}) {
      const root = join(projectsDir, project);
      await mkdir(root, { recursive: true });
      await runtime.projects.add(root, { trust: options.trust ?? true }, ACTOR);
      return root;
    },
    async close() {
      await killPluginLeftovers(packageDir);
      await runtime.close().catch(() => {});
      await cleanup();
    },
  };
}

// ---- processes ----------------------------------------------------------------------

export interface Spawned extends CliProcess {
  role: string;
}

const spawned = new ProcessTracker();

async function launch(
  role: string,
  args: string[],
  readyEvent: string,
  // Generous: on a loaded 2-core runner two workers starting at once took over 20 s (a start, not a behaviour).
  timeoutMs = 45_000,
): Promise<Spawned> {
  const proc: Spawned = Object.assign(spawned.spawn(args), { role });
  await untilLogged(proc, role, readyEvent, timeoutMs);
  return proc;
}

export interface WorkerFlags {
  concurrency?: number;
  lockDurationMs?: number;
  callTimeoutMs?: number;
  shutdownDeadlineMs?: number;
  operationPriorityMs?: number;
}

/** `switchyard worker`, resolved once it logs worker-ready. */
export function startWorker(installation: Installation, flags: WorkerFlags = {}): Promise<Spawned> {
  return launch(
    'worker',
    [
      ...globalArgs(installation),
      'worker',
      '--concurrency',
      String(flags.concurrency ?? 2),
      '--lock-duration',
      String(flags.lockDurationMs ?? 2_000),
      '--call-timeout',
      String(flags.callTimeoutMs ?? 30_000),
      ...(flags.shutdownDeadlineMs ? ['--shutdown-deadline', String(flags.shutdownDeadlineMs)] : []),
      ...(flags.operationPriorityMs === undefined
        ? []
        : ['--operation-priority', String(flags.operationPriorityMs)]),
    ],
    'worker-ready',
  );
}

/** `switchyard scheduler`, resolved once it has synced its job schedulers. */
export function startScheduler(installation: Installation, healthEveryMs: number): Promise<Spawned> {
  return launch(
    'scheduler',
    [...globalArgs(installation), 'scheduler', '--health-every', String(healthEveryMs)],
    'scheduler-synced',
  );
}

export { kill9 };

/** Every process this module started that still runs: SIGKILL, then wait. */
export async function killAllSpawned(): Promise<void> {
  await Promise.all(spawned.take().map((proc) => kill9(proc)));
}

/** One CLI command (`--json` first), its exit code and output. */
export async function runCli(
  installation: Installation,
  args: string[],
  options: { json?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnCliProcess([
    ...globalArgs(installation),
    ...(options.json === false ? [] : ['--json']),
    ...args,
  ]);
  const { code } = await completion(proc);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/**
 * An `append` operation on project `projectId` (directory `root`) whose plugin
 * writes its pid, spawns a grandchild in its group and sleeps 30 s; resolves
 * once the plugin has started its work, with both pids.
 */
export async function startSleepingOperation(
  installation: Installation,
  projectId: string,
  root: string,
): Promise<{ operation: OperationView; pid: number; grandchild: number }> {
  const { operation } = await installation.runtime.operations.create(
    {
      pluginId: PLUGIN_ID,
      projectId,
      action: 'append',
      input: { append: 'started', writePid: true, spawnChild: true, sleepMs: 30_000 },
    },
    ACTOR,
  );
  await waitFor(
    'the plugin to start its work',
    async () => (await readLines(join(root, 'operations.log'))).length,
  );
  const pid = Number((await readFile(join(root, 'plugin.pid'), 'utf8')).trim());
  const grandchild = Number((await readFile(join(root, 'grandchild.pid'), 'utf8')).trim());
  return { operation, pid, grandchild };
}

/** Polls the batch record until the batch has finished (with its results unless `results: false`). */
export function untilBatchFinished(
  runtime: Runtime,
  batchId: string,
  options: { timeoutMs: number; intervalMs?: number; results?: boolean; what?: string },
): Promise<BatchView> {
  return waitFor(
    options.what ?? 'the batch to finish',
    async () => {
      const view = await runtime.batches.store.get(batchId, { results: options.results ?? true });
      return view && view.state !== 'running' ? view : undefined;
    },
    options.timeoutMs,
    options.intervalMs,
  );
}

// ---- plugin processes -------------------------------------------------------------------

export interface PluginPid {
  pid: number;
  /** The worker that spawned it. */
  parent: number;
  role: 'plugin' | 'grandchild';
}

/** pid files the fixture wrote into its package directory. */
export async function pluginPids(packageDir: string): Promise<PluginPid[]> {
  const found: PluginPid[] = [];
  for (const name of await readdir(packageDir)) {
    const match = /^(plugin|grandchild)-(\d+)\.pid$/.exec(name);
    if (!match) continue;
    const parent = Number((await readFile(join(packageDir, name), 'utf8').catch(() => '0')).trim());
    found.push({ pid: Number(match[2]), parent, role: match[1] as PluginPid['role'] });
  }
  return found;
}

/**
 * Not a reused pid: its command line names the fixture or the grandchild's
 * sleeper — or, started from the verified copy of its package (a path under
 * `run/packages/`, which does not name the fixture), it works in the package
 * directory, as every call does.
 */
async function isOurPlugin(pid: number, packageDir: string): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (cmdline.includes('queue-plugin') || cmdline.includes('setTimeout(() => {}, 600000)')) return true;
  if (!cmdline.includes('/run/packages/')) return false;
  return (await readlink(`/proc/${pid}/cwd`).catch(() => '')) === packageDir;
}

/** Plugin processes (and grandchildren) of this package that still live. */
export async function livePluginPids(packageDir: string): Promise<PluginPid[]> {
  const alive: PluginPid[] = [];
  for (const entry of await pluginPids(packageDir)) {
    if ((await isAlive(entry.pid)) && (await isOurPlugin(entry.pid, packageDir))) alive.push(entry);
  }
  return alive;
}

/** SIGKILLs what an orphaned plugin (its worker killed with -9) left running. */
export async function killPluginLeftovers(packageDir: string): Promise<void> {
  const alive = await livePluginPids(packageDir).catch(() => []);
  killAll(alive.map((entry) => entry.pid));
}

// ---- small helpers ----------------------------------------------------------------------

export { sleep, waitFor };

export async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.length > 0);
}

/** The pid the plugin wrote to `file` in `root` (plugin.pid, grandchild.pid), once it is there. */
export async function writtenPid(root: string, file = 'plugin.pid'): Promise<number> {
  return waitFor(`the plugin to write ${file}`, async () => {
    const lines = await readLines(join(root, file)).catch(() => []);
    return Number(lines[0]) || undefined;
  });
}

/** `worker:<host>:<pid>` → pid */
export function pidOfIdentity(identity: string | undefined): number {
  return Number(identity?.slice(identity.lastIndexOf(':') + 1));
}

// ---- the report (test-artifacts/queue-faults.md) -------------------------------------------

export interface ReportRow {
  fault: string;
  expected: string;
  observed: string;
}

const REPORT_DIR = join(REPO, 'test-artifacts', 'queue-faults.d');

/**
 * Each test file keeps its rows and, in afterAll, writes its own section and
 * renders test-artifacts/queue-faults.md again from every section present, so
 * the file that finishes last leaves the whole table.
 */
export class Report {
  readonly rows: ReportRow[] = [];
  readonly notes: string[] = [];

  constructor(readonly section: string) {}

  add(fault: string, expected: string, observed: string): void {
    this.rows.push({ fault, expected, observed });
  }

  note(text: string): void {
    this.notes.push(text);
  }

  async write(): Promise<void> {
    await mkdir(REPORT_DIR, { recursive: true });
    await writeFile(
      join(REPORT_DIR, `${this.section}.json`),
      `${JSON.stringify({ section: this.section, rows: this.rows, notes: this.notes, at: new Date().toISOString() })}\n`,
    );
    const sections: { section: string; rows: ReportRow[]; notes: string[]; at: string }[] = [];
    for (const name of (await readdir(REPORT_DIR)).sort()) {
      if (name.endsWith('.json')) sections.push(JSON.parse(await readFile(join(REPORT_DIR, name), 'utf8')));
    }
    const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
    const lines = [
      '# Queued worker pool: fault tests',
      '',
      'Observed by `test/queue/*.test.ts` against an owned redis-server (AOF; appendfsync always where Redis is killed) and real ' +
        '`switchyard worker` / `switchyard scheduler` processes spawned from `dist/cli/main.js`; every ' +
        `\`kill -9\` is a real SIGKILL. Node ${process.version}. Every "observed" cell is a value seen in the run ` +
        '(section time in parentheses).',
      '',
      '| fault | expected | observed |',
      '|---|---|---|',
      ...sections.flatMap((section) =>
        section.rows.map((row) => `| ${[row.fault, row.expected, row.observed].map(cell).join(' | ')} |`),
      ),
      '',
      ...sections.flatMap((section) =>
        section.notes.map((text) => `- ${text} (${section.section}, ${section.at})`),
      ),
      '',
    ];
    await writeFile(join(REPO, 'test-artifacts', 'queue-faults.md'), lines.join('\n'));
  }
}
