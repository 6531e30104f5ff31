// The fault matrix's harness (docs/PROTOCOL.md §3, §9, §10), shared by the
// test/core/faults-*.test.ts files: a hand-written plugin
// (test/fixtures/fault-plugin.mjs) misbehaves in one way per package, and
// each call must fail with its typed error, record the plugin unhealthy,
// leave no process behind and leave the host able to make the next call.
// Package faults must be refused before anything is spawned. The observed
// outcome of every fault is written to test-artifacts/fault-matrix/<file>.md.
import { chmod, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { SwitchyardError } from '../../src/core/platform/errors.js';
import type { CallOptions, PluginDetail } from '../../src/core/plugins/plugin-service.js';
import { trustAndEnable, useCoreSuite, type CoreSuite } from './core-suite.js';
import { REPO, makeProject } from './data-dir.js';
import { installFixturePackage } from './manifest.js';
import { killAll, pidFiles, survivors, type PidFile } from './processes.js';

export const FIXTURE = join(REPO, 'test', 'fixtures', 'fault-plugin.mjs');
export const LIMITS = { callTimeoutMs: 1_500, graceMs: 3_000 };
export const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
export const MiB = 1_048_576;
export const MAX_EXECUTABLE_BYTES = 128 * MiB;
export const ACTOR = 'user:test';

// ---- the matrix ---------------------------------------------------------------------

interface Row {
  fault: string;
  outcome: string;
  health: string;
  survivors: string;
}

export interface FaultMatrix {
  /** A row from one observed call. */
  record: (fault: string, observed: Observed) => void;
  /** A row for a fault refused before any call (discovery): nothing was spawned. */
  recordRefused: (fault: string, caught: unknown, health: string) => void;
}

function describeError(error: unknown): string {
  if (error === undefined) return 'none: the call succeeded';
  if (error instanceof SwitchyardError) return `${error.constructor.name} (${error.code})`;
  return `${error instanceof Error ? error.constructor.name : typeof error} (not a SwitchyardError)`;
}

/** The rows of test file test/core/<name>.test.ts, written to test-artifacts/fault-matrix/<name>.md after it. */
export function useFaultMatrix(name: string): FaultMatrix {
  const rows: Row[] = [];
  afterAll(async () => {
    const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
    const lines = [
      '# Fault matrix of the host core',
      '',
      `Observed by \`test/core/${name}.test.ts\` on ${new Date().toISOString()} (Node ${process.version}, ` +
        `call timeout ${LIMITS.callTimeoutMs} ms, grace ${LIMITS.graceMs} ms). Every cell is a value seen ` +
        'in that run: the error the call ended with, `plugins.show().health` right after it, and which ' +
        'of the processes the call started (recorded pids and their process group) were still alive ' +
        'when it returned.',
      '',
      '| fault | error class (code) | health after | surviving processes |',
      '|---|---|---|---|',
      ...rows.map(
        (row) => `| ${[row.fault, row.outcome, row.health, row.survivors].map(cell).join(' | ')} |`,
      ),
    ];
    const dir = join(REPO, 'test-artifacts', 'fault-matrix');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.md`), `${lines.join('\n')}\n`);
  });
  return {
    record(fault, observed) {
      const checked = observed.checkedPids.length;
      rows.push({
        fault,
        outcome: describeError(observed.error),
        health: observed.detail.health,
        survivors:
          observed.alive.length > 0
            ? `${observed.alive.length} alive: pid ${observed.alive.join(', ')}`
            : checked === 0
              ? 'none (nothing was spawned)'
              : `none (${checked} process${checked === 1 ? '' : 'es'} checked: ${observed.roles.join(', ')})`,
      });
    },
    recordRefused(fault, caught, health) {
      rows.push({ fault, outcome: describeError(caught), health, survivors: 'none (nothing was spawned)' });
    },
  };
}

// ---- packages ---------------------------------------------------------------------

export interface Pkg {
  id: string;
  dir: string;
  executable: string;
}

export interface InstallOptions {
  id?: string;
  executable?: string;
  manifest?: Record<string, unknown>;
}

/** The fault plugin installed under <root>/plugins/<id>, misbehaving as `mode` once armed. */
export async function installFault(root: string, mode: string, options: InstallOptions = {}): Promise<Pkg> {
  const id = options.id ?? `fault-${mode}`;
  const dir = join(root, 'plugins', id);
  const executable = options.executable ?? 'fault-plugin.mjs';
  await installFixturePackage(dir, FIXTURE, {
    id,
    name: `Fault plugin (${mode})`,
    arguments: [mode],
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: ALL_SCOPES,
    ...options.manifest,
    executable,
  });
  return { id, dir, executable };
}

/** From now on the package misbehaves (before, it answers the enable exchange cleanly). */
export async function arm(pkg: Pkg): Promise<void> {
  await writeFile(join(pkg.dir, 'armed'), '');
}

export async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}

/** Replaces a file by a sparse one of `size` bytes, keeping mode 0755. Never reads or writes its body. */
export async function sparse(path: string, size: number): Promise<void> {
  const handle = await open(path, 'w', 0o755);
  try {
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
  await chmod(path, 0o755);
}

// ---- observing one call -------------------------------------------------------------

export interface Observed {
  error: unknown;
  result: unknown;
  elapsedMs: number;
  /** Leader pids reported by the supervisor's onSpawn. */
  spawned: number[];
  newPidFiles: PidFile[];
  checkedPids: number[];
  roles: string[];
  alive: number[];
  detail: PluginDetail;
}

export type ErrorClass = abstract new (...args: never[]) => SwitchyardError;

export interface FaultSuite extends CoreSuite, FaultMatrix {
  /** The trusted project `demo` (a package.json in it); `shadow` is registered untrusted. */
  readonly projectRoot: string;
  /** Installed, discovered, trusted at its fingerprint, enabled (a clean exchange), then armed. */
  readyFault: (mode: string, options?: InstallOptions & { scopes?: string[]; arm?: boolean }) => Promise<Pkg>;
  /**
   * Runs one call and looks, right after it returns, at every process it
   * started: the leader (onSpawn), every pid the plugin recorded, and the
   * process group of each leader.
   */
  observe: (pkg: Pkg, call: (options: CallOptions) => Promise<unknown>) => Promise<Observed>;
  /** An inspection of `project` by the package, as a call for `observe`. */
  inspect: (pkg: Pkg, project?: string) => (options: CallOptions) => Promise<unknown>;
  /** The host is fine: a good call on another plugin succeeds. */
  expectHostFine: () => Promise<void>;
  /** The common shape of a call fault: typed error, unhealthy, nothing survives, the host carries on. */
  expectCallFault: (
    fault: string,
    pkg: Pkg,
    expected: { code: string; errorClass: ErrorClass },
    call?: (options: CallOptions) => Promise<unknown>,
  ) => Promise<Observed>;
  /** A package fault: refused by the on-disk re-check, nothing spawned. */
  expectRefusedBeforeSpawn: (
    fault: string,
    pkg: Pkg,
    expected: { code: string; errorClass: ErrorClass; message: RegExp },
  ) => Promise<Observed>;
}

/**
 * A core for test file test/core/<name>.test.ts with the projects demo
 * (trusted) and shadow (untrusted) and the well-behaved plugin fault-good
 * enabled; its matrix written after it.
 */
export function useFaultSuite(name: string): FaultSuite {
  const suite = useCoreSuite(name, {
    processActor: 'test-worker',
    callPolicy: { limits: LIMITS, requireConfinement: false },
  });
  // Registered after the suite's hooks, so it is written before the core is closed.
  const matrix = useFaultMatrix(name);
  let projectRoot: string | undefined;

  beforeAll(async () => {
    const { core, dataDir } = suite;
    projectRoot = (
      await core.projects.add(await makeProject(dataDir, 'demo', ['package.json']), { trust: true }, ACTOR)
    ).root;
    await core.projects.add(await makeProject(dataDir, 'shadow'), {}, ACTOR);
    await readyFault('good', { arm: false });
  });

  const readyFault: FaultSuite['readyFault'] = async (mode, options = {}) => {
    const pkg = await installFault(suite.dataDir, mode, options);
    const enabled = await trustAndEnable(suite.core, pkg.id, options.scopes ?? ALL_SCOPES, ACTOR);
    expect(enabled).toMatchObject({ enabled: true, health: 'healthy' });
    if (options.arm !== false) await arm(pkg);
    return pkg;
  };

  const observe: FaultSuite['observe'] = async (pkg, call) => {
    const before = new Set((await pidFiles(pkg.dir)).map((file) => file.file));
    const spawned: number[] = [];
    const started = performance.now();
    let error: unknown;
    let result: unknown;
    try {
      result = await call({ onSpawn: (pid) => spawned.push(pid) });
    } catch (caught) {
      error = caught;
    }
    const elapsedMs = performance.now() - started;
    const newPidFiles = (await pidFiles(pkg.dir)).filter((file) => !before.has(file.file));
    const checkedPids = [...new Set([...spawned, ...newPidFiles.map((file) => file.pid)])];
    const groups = [
      ...new Set([
        ...spawned,
        ...newPidFiles.filter((file) => file.role === 'plugin').map((file) => file.pid),
      ]),
    ];
    const alive = await survivors(checkedPids, groups);
    killAll(alive);
    const roles = checkedPids.map(
      (pid) => newPidFiles.find((file) => file.pid === pid)?.role ?? 'plugin (no pid file)',
    );
    const detail = await suite.core.plugins.show(pkg.id);
    return { error, result, elapsedMs, spawned, newPidFiles, checkedPids, roles, alive, detail };
  };

  const inspect: FaultSuite['inspect'] =
    (pkg, project = 'demo') =>
    (options) =>
      suite.core.plugins.inspect(pkg.id, project, options);

  const expectHostFine = async () => {
    const result = await suite.core.plugins.inspect('fault-good', 'demo');
    expect(result.summary).toBe('fault-plugin (good) inspected demo');
    expect((await suite.core.plugins.show('fault-good')).health).toBe('healthy');
  };

  const expectCallFault: FaultSuite['expectCallFault'] = async (
    fault,
    pkg,
    expected,
    call = inspect(pkg),
  ) => {
    const observed = await observe(pkg, call);
    matrix.record(fault, observed);
    expect(observed.error).toBeInstanceOf(expected.errorClass);
    expect(observed.error).toMatchObject({ code: expected.code });
    // The call really ran a process, and it recorded itself.
    expect(observed.spawned).toHaveLength(1);
    expect(observed.newPidFiles.map((file) => file.pid)).toContain(observed.spawned[0]);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('unhealthy');
    expect(observed.detail.lastError).toBeTruthy();
    await expectHostFine();
    return observed;
  };

  const expectRefusedBeforeSpawn: FaultSuite['expectRefusedBeforeSpawn'] = async (fault, pkg, expected) => {
    const observed = await observe(pkg, inspect(pkg));
    matrix.record(fault, observed);
    expect(observed.error).toBeInstanceOf(expected.errorClass);
    expect(observed.error).toMatchObject({ code: expected.code });
    expect((observed.error as Error).message).toMatch(expected.message);
    expect(observed.spawned).toEqual([]);
    expect(observed.newPidFiles).toEqual([]);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('unhealthy');
    await expectHostFine();
    return observed;
  };

  // The core suite's getters (core, dataDir, plugins, redis, prefix) are copied, not called: they are read when used.
  const fields = Object.getOwnPropertyDescriptors(suite);
  return Object.defineProperties(
    {
      get projectRoot() {
        if (projectRoot === undefined) throw new Error('the fault suite is not set up yet');
        return projectRoot;
      },
      ...matrix,
      readyFault,
      observe,
      inspect,
      expectHostFine,
      expectCallFault,
      expectRefusedBeforeSpawn,
    },
    fields,
  ) as FaultSuite;
}
