// The fault matrix of the host core (docs/PROTOCOL.md §3, §9, §10) against a real
// Redis and real processes: a hand-written plugin (test/fixtures/fault-plugin.mjs)
// misbehaves in one way per package, and each call must fail with its typed
// error, record the plugin unhealthy, leave no process behind and leave the
// host able to make the next call. Package faults must be refused before
// anything is spawned. The observed outcome of every fault is written to
// test-artifacts/fault-matrix.md.
import {
  appendFile,
  chmod,
  copyFile,
  mkdir,
  open,
  readFile,
  rename,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import { createCore, type Core } from '../../src/core/runtime/core-services.js';
import {
  FingerprintChangedError,
  IdentityMismatchError,
  MalformedResponseError,
  OversizedResponseError,
  PackageInvalidError,
  PermissionDeniedError,
  PluginCallError,
  PluginCrashedError,
  PluginTimeoutError,
  PluginUnavailableError,
  ProjectUntrustedError,
  ProtocolMismatchError,
  SwitchyardError,
} from '../../src/core/platform/errors.js';
import type { CallOptions, PluginDetail } from '../../src/core/plugins/plugin-service.js';
import { STDERR_LINE_CHARS, STDERR_LINES } from '../../src/core/supervision/stderr-tail.js';
import { setConfinement, trustAndEnable, useCoreSuite } from '../support/core-suite.js';
import { REPO, makeProject } from '../support/data-dir.js';
import { installFixturePackage } from '../support/manifest.js';
import { killAll, pidFiles, survivors, type PidFile } from '../support/processes.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'fault-plugin.mjs');
const LIMITS = { callTimeoutMs: 1_500, graceMs: 3_000 };
const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const MiB = 1_048_576;
const MAX_EXECUTABLE_BYTES = 128 * MiB;
const ACTOR = 'user:test';

let core: Core;
let dataDir: string;
let projectRoot: string;

// ---- the matrix ---------------------------------------------------------------------

interface Row {
  fault: string;
  outcome: string;
  health: string;
  survivors: string;
}
const rows: Row[] = [];

function describeError(error: unknown): string {
  if (error === undefined) return 'none: the call succeeded';
  if (error instanceof SwitchyardError) return `${error.constructor.name} (${error.code})`;
  return `${error instanceof Error ? error.constructor.name : typeof error} (not a SwitchyardError)`;
}

function record(fault: string, observed: Observed): void {
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
}

async function writeMatrix(): Promise<void> {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    '# Fault matrix of the host core',
    '',
    `Observed by \`test/core/faults.test.ts\` on ${new Date().toISOString()} (Node ${process.version}, ` +
      `call timeout ${LIMITS.callTimeoutMs} ms, grace ${LIMITS.graceMs} ms). Every cell is a value seen ` +
      'in that run: the error the call ended with, `plugins.show().health` right after it, and which ' +
      'of the processes the call started (recorded pids and their process group) were still alive ' +
      'when it returned.',
    '',
    '| fault | error class (code) | health after | surviving processes |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${[row.fault, row.outcome, row.health, row.survivors].map(cell).join(' | ')} |`),
  ];
  await mkdir(join(REPO, 'test-artifacts'), { recursive: true });
  await writeFile(join(REPO, 'test-artifacts', 'fault-matrix.md'), `${lines.join('\n')}\n`);
}

// ---- packages ---------------------------------------------------------------------

interface Pkg {
  id: string;
  dir: string;
  executable: string;
}

interface InstallOptions {
  id?: string;
  executable?: string;
  manifest?: Record<string, unknown>;
}

async function installFault(root: string, mode: string, options: InstallOptions = {}): Promise<Pkg> {
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

/** Installed, discovered, trusted at its fingerprint, enabled (a clean exchange), then armed. */
async function readyFault(
  mode: string,
  options: InstallOptions & { scopes?: string[]; arm?: boolean } = {},
): Promise<Pkg> {
  const pkg = await installFault(dataDir, mode, options);
  const enabled = await trustAndEnable(core, pkg.id, options.scopes ?? ALL_SCOPES, ACTOR);
  expect(enabled).toMatchObject({ enabled: true, health: 'healthy' });
  if (options.arm !== false) await arm(pkg);
  return pkg;
}

async function arm(pkg: Pkg): Promise<void> {
  await writeFile(join(pkg.dir, 'armed'), '');
}

// ---- observing one call -------------------------------------------------------------

interface Observed {
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

/**
 * Runs one call and looks, right after it returns, at every process it
 * started: the leader (onSpawn), every pid the plugin recorded, and the
 * process group of each leader.
 */
async function observe(pkg: Pkg, call: (options: CallOptions) => Promise<unknown>): Promise<Observed> {
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
    ...new Set([...spawned, ...newPidFiles.filter((file) => file.role === 'plugin').map((file) => file.pid)]),
  ];
  const alive = await survivors(checkedPids, groups);
  killAll(alive);
  const roles = checkedPids.map(
    (pid) => newPidFiles.find((file) => file.pid === pid)?.role ?? 'plugin (no pid file)',
  );
  const detail = await core.plugins.show(pkg.id);
  return { error, result, elapsedMs, spawned, newPidFiles, checkedPids, roles, alive, detail };
}

const inspect =
  (pkg: Pkg, project = 'demo') =>
  (options: CallOptions) =>
    core.plugins.inspect(pkg.id, project, options);

/** The host is fine: a good call on another plugin succeeds. */
async function expectHostFine(): Promise<void> {
  const result = await core.plugins.inspect('fault-good', 'demo');
  expect(result.summary).toBe('fault-plugin (good) inspected demo');
  expect((await core.plugins.show('fault-good')).health).toBe('healthy');
}

type ErrorClass = abstract new (...args: never[]) => SwitchyardError;

/** The common shape of a call fault: typed error, unhealthy, nothing survives, the host carries on. */
async function expectCallFault(
  fault: string,
  pkg: Pkg,
  expected: { code: string; errorClass: ErrorClass },
  call: (options: CallOptions) => Promise<unknown> = inspect(pkg),
): Promise<Observed> {
  const observed = await observe(pkg, call);
  record(fault, observed);
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
}

/** A package fault: refused by the on-disk re-check, nothing spawned. */
async function expectRefusedBeforeSpawn(
  fault: string,
  pkg: Pkg,
  expected: { code: string; errorClass: ErrorClass; message: RegExp },
): Promise<Observed> {
  const observed = await observe(pkg, inspect(pkg));
  record(fault, observed);
  expect(observed.error).toBeInstanceOf(expected.errorClass);
  expect(observed.error).toMatchObject({ code: expected.code });
  expect((observed.error as Error).message).toMatch(expected.message);
  expect(observed.spawned).toEqual([]);
  expect(observed.newPidFiles).toEqual([]);
  expect(observed.alive).toEqual([]);
  expect(observed.detail.health).toBe('unhealthy');
  await expectHostFine();
  return observed;
}

// ---- set-up -------------------------------------------------------------------------

const suite = useCoreSuite('faults', {
  processActor: 'test-worker',
  callPolicy: { limits: LIMITS, requireConfinement: false },
});

beforeAll(async () => {
  ({ core, dataDir } = suite);
  projectRoot = (
    await core.projects.add(await makeProject(dataDir, 'demo', ['package.json']), { trust: true }, ACTOR)
  ).root;
  await core.projects.add(await makeProject(dataDir, 'shadow'), {}, ACTOR);
  await readyFault('good', { arm: false });
});

// Registered after the suite's hooks, so it runs before the core is closed.
afterAll(async () => {
  await writeMatrix();
});

// ---- process faults -------------------------------------------------------------------

describe('a misbehaving plugin process fails only its own call', () => {
  it('crash-before-initialize: CRASHED with exit code 1', async () => {
    const pkg = await readyFault('crash-before-initialize');
    const observed = await expectCallFault('crash-before-initialize', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 1, signal: null });
  });

  it('crash-after-initialize: CRASHED with exit code 2', async () => {
    const pkg = await readyFault('crash-after-initialize');
    const observed = await expectCallFault('crash-after-initialize', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 2, signal: null });
  });

  it('exit-zero-silent: exiting 0 without an answer is a crash too', async () => {
    const pkg = await readyFault('exit-zero-silent');
    const observed = await expectCallFault('exit-zero-silent', pkg, {
      code: 'CRASHED',
      errorClass: PluginCrashedError,
    });
    expect(observed.error).toMatchObject({ exitCode: 0 });
  });

  it('hang: TIMEOUT after the call timeout, the process killed', async () => {
    const pkg = await readyFault('hang');
    const observed = await expectCallFault('hang', pkg, { code: 'TIMEOUT', errorClass: PluginTimeoutError });
    expect(observed.elapsedMs).toBeGreaterThanOrEqual(LIMITS.callTimeoutMs - 50);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.callTimeoutMs + LIMITS.graceMs + 1_000);
  });

  it('hang-grandchild: TIMEOUT, and the grandchild holding stdout dies with the group', async () => {
    const pkg = await readyFault('hang-grandchild');
    const observed = await expectCallFault('hang-grandchild', pkg, {
      code: 'TIMEOUT',
      errorClass: PluginTimeoutError,
    });
    expect(observed.newPidFiles.map((file) => file.role).sort()).toEqual(['grandchild', 'plugin']);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.callTimeoutMs + LIMITS.graceMs + 1_000);
  });

  it('oversized-line: a response of 1 MiB + 1 byte is OVERSIZED_RESPONSE', async () => {
    const pkg = await readyFault('oversized-line');
    await expectCallFault('oversized-line (1 MiB + 1 byte)', pkg, {
      code: 'OVERSIZED_RESPONSE',
      errorClass: OversizedResponseError,
    });
  });

  it('max-line: a valid response of exactly 1 MiB is accepted (the limit is not off by one)', async () => {
    const pkg = await readyFault('max-line');
    const observed = await observe(pkg, inspect(pkg));
    record('max-line (exactly 1 MiB, control)', observed);
    expect(observed.error).toBeUndefined();
    expect((observed.result as { summary: string }).summary).toMatch(/^p+$/);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it.each([
    'non-json',
    'unknown-field-result',
    'unknown-field-envelope',
    'unknown-field-error',
    'wrong-id',
    'two-documents',
    'deep-line',
    'deep-result',
    'deep-error',
  ])('%s: MALFORMED_RESPONSE', async (mode) => {
    const pkg = await readyFault(mode);
    await expectCallFault(mode, pkg, { code: 'MALFORMED_RESPONSE', errorClass: MalformedResponseError });
  });

  it('deep-output: an operate output 200,000 arrays deep is MALFORMED_RESPONSE, not a stack overflow', async () => {
    const pkg = await readyFault('deep-output');
    const observed = await expectCallFault(
      'deep-output (200,000 arrays deep)',
      pkg,
      { code: 'MALFORMED_RESPONSE', errorClass: MalformedResponseError },
      (options) => core.plugins.operate(pkg.id, 'demo', 'touch', {}, options),
    );
    expect((observed.error as Error).message).toMatch(/nested deeper than \d+ levels/);
  });

  // Contract (PROTOCOL §8): -32000 is the plugin's own error, not a fault: health is left as it was.
  it('rpc-error: a JSON-RPC error is PLUGIN_ERROR, health unchanged, and the logged error is redacted', async () => {
    const pkg = await readyFault('rpc-error');
    const observed = await observe(pkg, inspect(pkg));
    record('rpc-error (-32000 with a token)', observed);
    expect(observed.error).toBeInstanceOf(PluginCallError);
    expect(observed.error).toMatchObject({ code: 'PLUGIN_ERROR', rpcCode: -32000 });
    expect(observed.spawned).toHaveLength(1);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
    expect(observed.detail.lastError).toBeUndefined();
    const logs = JSON.stringify(await core.plugins.logs(pkg.id));
    expect(logs).toContain('[REDACTED]');
    expect(logs).not.toContain('s3cr3t-t0ken-value');
    await expectHostFine();
  });

  it('non-json-secret: a malformed line quoted into the stored error keeps its secrets redacted', async () => {
    const pkg = await readyFault('non-json-secret');
    const observed = await expectCallFault('non-json-secret (quoted secrets in the line)', pkg, {
      code: 'MALFORMED_RESPONSE',
      errorClass: MalformedResponseError,
    });
    const stored = `${observed.detail.lastError} ${JSON.stringify(await core.plugins.logs(pkg.id))}`;
    expect(stored).toContain('[REDACTED]');
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain('tok-5ecret-value');
  });
});

describe('a running plugin must echo the trusted identity', () => {
  it.each([
    ['lie-id', 'plugin.id'],
    ['lie-name', 'plugin.name'],
    ['lie-version', 'plugin.version'],
    ['lie-capabilities', 'plugin.capabilities'],
    ['lie-requested-scopes', 'plugin.requestedScopes'],
    ['lie-granted-scopes', 'grantedScopes'],
  ])('%s: IDENTITY_MISMATCH naming only %s', async (mode, field) => {
    const pkg = await readyFault(mode);
    const observed = await expectCallFault(mode, pkg, {
      code: 'IDENTITY_MISMATCH',
      errorClass: IdentityMismatchError,
    });
    const message = (observed.error as Error).message;
    expect(message).toContain(`trusted package: ${field} `);
    expect(message).not.toContain('; ');
  });

  it('a plugin that lies from the start is never enabled', async () => {
    const pkg = await installFault(dataDir, 'lie-version', { id: 'fault-lie-at-enable' });
    await arm(pkg);
    await core.plugins.refresh(ACTOR);
    const { fingerprint } = await core.plugins.show(pkg.id);
    await core.plugins.trust(pkg.id, fingerprint!, ACTOR);
    await setConfinement(core, pkg.id, 'package-writable');
    const observed = await observe(pkg, () => core.plugins.enable(pkg.id, ALL_SCOPES, ACTOR));
    record('lie-version at enable', observed);
    expect(observed.error).toBeInstanceOf(IdentityMismatchError);
    expect(observed.detail).toMatchObject({ enabled: false, grantedScopes: [], health: 'unhealthy' });
    expect(observed.newPidFiles).toHaveLength(1);
    expect(observed.alive).toEqual([]);
    await expectHostFine();
  });
});

describe('bounded, redacted stderr and a minimal environment', () => {
  it('linger: a plugin that answers but will not exit is killed after the grace period (call succeeds)', async () => {
    const pkg = await readyFault('linger');
    const observed = await observe(pkg, inspect(pkg));
    record('linger (answers, ignores stdin close, has a child)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.newPidFiles.map((file) => file.role).sort()).toEqual(['grandchild', 'plugin']);
    expect(observed.elapsedMs).toBeGreaterThanOrEqual(LIMITS.graceMs - 100);
    expect(observed.elapsedMs).toBeLessThan(LIMITS.graceMs + 1_500);
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it('stderr-flood: 100 MiB of stderr is bounded, redacted and does not fail the call', async () => {
    const secrets = ['hunter2', 'abc.def', 'user:pw', 'pw@example.com', 'AKIAABCDEFGHIJKLMNOP'];
    const pkg = await readyFault('stderr-flood');
    const logsBefore = (await core.plugins.logs(pkg.id, 1_000)).length;
    // The flood is about bounds, not speed: its call gets the default timeout so a
    // loaded machine cannot turn it into a TIMEOUT. Same Redis keys, same packages.
    const patient = await createCore({
      dataDir,
      redisUrl: suite.redis.url,
      prefix: suite.prefix,
      processActor: 'test-worker',
    });
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 10);
    let observed: Observed;
    try {
      observed = await observe(pkg, (options) => patient.plugins.inspect(pkg.id, 'demo', options));
    } finally {
      clearInterval(sampler);
      await patient.close();
    }
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const logs = await core.plugins.logs(pkg.id, 1_000);
    const added = logs.slice(0, logs.length - logsBefore);
    const growthMiB = (rssPeak - rssBefore) / MiB;
    const longest = Math.max(0, ...added.map((entry) => entry.line.length));
    record(
      `stderr-flood (100 MiB with secrets; RSS +${growthMiB.toFixed(1)} MiB, ${added.length} log entries, ` +
        `longest ${longest} chars, ${Math.round(observed.elapsedMs)} ms)`,
      observed,
    );
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
    expect(growthMiB).toBeLessThan(100);
    expect(added.length).toBeGreaterThan(0);
    expect(added.length).toBeLessThanOrEqual(STDERR_LINES + 1);
    for (const entry of added) {
      expect(entry.source).toBe('stderr');
      expect(entry.line.length).toBeLessThanOrEqual(STDERR_LINE_CHARS);
    }
    const text = added.map((entry) => entry.line).join('\n');
    expect(text).toContain('[REDACTED]');
    expect(text).toContain('Bearer [REDACTED]');
    for (const secret of secrets) expect(text).not.toContain(secret);
    await expectHostFine();
  });

  it('stderr-split-secret: the 64 KiB cut does not turn a secret line into an unredacted fragment', async () => {
    const pkg = await readyFault('stderr-split-secret');
    const observed = await observe(pkg, inspect(pkg));
    record('stderr-split-secret (64 KiB cut inside password=…)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const logs = await core.plugins.logs(pkg.id, 1_000);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.map((entry) => entry.line).join('\n')).not.toContain('hunter2');
  });

  it('stderr-json-secret: secrets in a structured (JSON) stderr line are redacted', async () => {
    const pkg = await readyFault('stderr-json-secret');
    const observed = await observe(pkg, inspect(pkg));
    record('stderr-json-secret ({"password":"…"} on stderr)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const text = (await core.plugins.logs(pkg.id)).map((entry) => entry.line).join('\n');
    expect(text).toContain('"msg":"connecting"');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('k-1234567');
  });

  it('env-dump: no secret of the host reaches the plugin, only PATH, TMPDIR, LANG and the protocol marker', async () => {
    const planted = {
      OPENAI_API_KEY: 'sk-test-openai-0123456789',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456789abcdef',
      GITHUB_TOKEN: 'ghp_testtoken0123456789',
      DATABASE_URL: 'postgres://app:db-pass-0123@db.example.com/app',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    const pkg = await readyFault('env-dump');
    let observed: Observed;
    try {
      observed = await observe(pkg, inspect(pkg));
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    record('env-dump (host has OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DATABASE_URL)', observed);
    expect(observed.error).toBeUndefined();
    expect(observed.alive).toEqual([]);
    const facts = (observed.result as { facts: { id: string; label: string; value: string }[] }).facts;
    const env = new Map(facts.filter((fact) => fact.id.startsWith('env.')).map((f) => [f.label, f.value]));
    expect(env.size).toBeGreaterThan(0);
    for (const name of env.keys()) {
      expect(['PATH', 'TMPDIR', 'LANG', 'SWITCHYARD_PLUGIN_PROTOCOL', 'NODE_OPTIONS']).toContain(name);
    }
    expect(env.has('HOME')).toBe(false);
    expect(env.get('SWITCHYARD_PLUGIN_PROTOCOL')).toBe('switchyard.plugin/v1');
    expect(env.get('PATH')).toBe(process.env.PATH);
    // A Node script started from its verified descriptor reads that descriptor (PROTOCOL §9.3).
    if (env.has('NODE_OPTIONS')) expect(env.get('NODE_OPTIONS')).toBe('--preserve-symlinks-main');
    const everything = JSON.stringify(observed.result);
    for (const value of Object.values(planted)) expect(everything).not.toContain(value);
  });
});

// ---- package faults after trust ---------------------------------------------------------

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
    const after = await core.plugins.show(pkg.id);
    expect(after.available).toBe(false);
    expect(after.error).toMatch(message);
    // And it stays refused, still without running anything.
    await expect(core.plugins.inspect(pkg.id, 'demo')).rejects.toBeInstanceOf(PluginUnavailableError);
    expect((await pidFiles(pkg.dir)).length).toBe(1);
  });

  it('executable escaping the package through a directory swapped for a symlink: PACKAGE_INVALID', async () => {
    const pkg = await readyFault('good', {
      id: 'pkg-escape',
      executable: 'bin/fault-plugin.mjs',
      arm: false,
    });
    // Same bytes outside the package: the fingerprint alone would not notice.
    const outside = join(dataDir, 'outside-bin');
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
    const trusted = await core.plugins.show(pkg.id);
    expect(trusted.grantedScopes).toEqual(ALL_SCOPES);
    await appendFile(join(pkg.dir, file), '\n');
    const observed = await expectRefusedBeforeSpawn(fault, pkg, {
      code: 'FINGERPRINT_CHANGED',
      errorClass: FingerprintChangedError,
      message: /changed on disk/,
    });
    expect(observed.detail).toMatchObject({ trust: 'changed', enabled: false, grantedScopes: [] });
    expect(observed.detail.trustedFingerprint).toBe(trusted.fingerprint);
    const audit = await readAudit(core.redis, core.keys, 20);
    const entry = audit.find(
      (item) => item.action === 'plugin.fingerprint-changed' && item.target === pkg.id,
    );
    expect(entry).toBeDefined();
    expect(entry!.detail).toMatchObject({ trusted: trusted.fingerprint });
    expect(entry!.detail.current).not.toBe(trusted.fingerprint);
    // Every later call is refused too, until a new review.
    await expect(core.plugins.inspect(pkg.id, 'demo')).rejects.toMatchObject({ code: 'FINGERPRINT_CHANGED' });
    await expect(core.plugins.enable(pkg.id, ALL_SCOPES, ACTOR)).rejects.toMatchObject({
      code: 'FINGERPRINT_CHANGED',
    });
    expect((await pidFiles(pkg.dir)).length).toBe(1);
  });
});

// ---- discovery ------------------------------------------------------------------------

describe('discovery refuses packages it cannot ever run', () => {
  const discoverySuite = useCoreSuite('faults-discovery', {
    processActor: 'test-worker',
    callPolicy: { limits: LIMITS, requireConfinement: false },
    redis: () => suite.redis,
    prepare: (root) => installFault(root, 'good', { id: 'disc-good' }),
  });
  let discovery: Core;
  let root: string;

  beforeAll(() => void ({ core: discovery, dataDir: root } = discoverySuite));

  async function expectUnusable(id: string, error: RegExp, code: string, errorClass: ErrorClass) {
    const listed = (await discovery.plugins.refresh(ACTOR)).find((plugin) => plugin.id === id);
    expect(listed).toBeDefined();
    expect(listed).toMatchObject({ available: false, trust: 'untrusted', enabled: false });
    expect(listed!.error).toMatch(error);
    // Every other package is still discovered.
    const good = (await discovery.plugins.list()).find((plugin) => plugin.id === 'disc-good');
    expect(good).toMatchObject({ available: true });
    let caught: unknown;
    try {
      await discovery.plugins.trust(id, listed!.fingerprint ?? 'a'.repeat(64), ACTOR);
      await setConfinement(discovery, id, 'package-writable');
    } catch (thrown) {
      caught = thrown;
    }
    expect(caught).toBeInstanceOf(errorClass);
    expect(caught).toMatchObject({ code });
    await expect(discovery.plugins.enable(id, ['project.metadata.read'], ACTOR)).rejects.toMatchObject({
      code,
    });
    return { listed: listed!, caught };
  }

  function recordDiscovery(fault: string, caught: unknown, health: string): void {
    rows.push({ fault, outcome: describeError(caught), health, survivors: 'none (nothing was spawned)' });
  }

  it('protocolVersion switchyard.plugin/v2: listed with an actionable error; trust and enable PROTOCOL_MISMATCH', async () => {
    const pkg = await installFault(root, 'good', {
      id: 'disc-v2',
      manifest: { protocolVersion: 'switchyard.plugin/v2' },
    });
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /switchyard\.plugin\/v2.*switchyard\.plugin\/v1.*ask the plugin's author/,
      'PROTOCOL_MISMATCH',
      ProtocolMismatchError,
    );
    recordDiscovery('protocolVersion switchyard.plugin/v2 (trust/enable)', caught, listed.health);
    expect((await pidFiles(pkg.dir)).length).toBe(0);
  });

  it('executable "../x" escaping the package: refused at discovery, never trusted', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-dotdot' });
    await copyFile(FIXTURE, join(root, 'plugins', 'x'));
    await chmod(join(root, 'plugins', 'x'), 0o755);
    await writeFile(
      join(pkg.dir, 'plugin.json'),
      JSON.stringify({ ...(await readJson(join(pkg.dir, 'plugin.json'))), executable: '../x' }),
    );
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /executable: .*no "\.\." escape/,
      'PLUGIN_UNAVAILABLE',
      PluginUnavailableError,
    );
    recordDiscovery('executable "../x" (trust/enable)', caught, listed.health);
    expect((await pidFiles(join(root, 'plugins'))).length).toBe(0);
  });

  it('an executable over 128 MiB (sparse): refused at discovery without being read', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-huge' });
    await sparse(join(pkg.dir, pkg.executable), MAX_EXECUTABLE_BYTES + 1);
    const started = performance.now();
    const { listed, caught } = await expectUnusable(
      pkg.id,
      /larger than 134217728 bytes \(128 MiB\)/,
      'PLUGIN_UNAVAILABLE',
      PluginUnavailableError,
    );
    expect(listed.fingerprint).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
    recordDiscovery('executable of 128 MiB + 1 byte (trust/enable)', caught, listed.health);
  });

  it('an executable of exactly 128 MiB is within the limit (control)', async () => {
    const pkg = await installFault(root, 'good', { id: 'disc-max' });
    await sparse(join(pkg.dir, pkg.executable), MAX_EXECUTABLE_BYTES);
    const listed = (await discovery.plugins.refresh(ACTOR)).find((plugin) => plugin.id === pkg.id);
    expect(listed).toMatchObject({ available: true });
    expect(listed!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });
});

// ---- authorization --------------------------------------------------------------------

describe('authorization faults are the caller’s, not the plugin’s', () => {
  it('an untrusted project: PROJECT_UNTRUSTED, nothing spawned, the plugin not marked unhealthy', async () => {
    const pkg = {
      id: 'fault-good',
      dir: join(dataDir, 'plugins', 'fault-good'),
      executable: 'fault-plugin.mjs',
    };
    const observed = await observe(pkg, inspect(pkg, 'shadow'));
    record('untrusted project', observed);
    expect(observed.error).toBeInstanceOf(ProjectUntrustedError);
    expect(observed.error).toMatchObject({ code: 'PROJECT_UNTRUSTED' });
    expect(observed.spawned).toEqual([]);
    expect(observed.newPidFiles).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it('root is withheld with only project.metadata.read and given with project.files.read', async () => {
    const pkg = await readyFault('good', { id: 'fault-root', scopes: ['project.metadata.read'], arm: false });
    const rootFact = async () => {
      const result = await core.plugins.inspect(pkg.id, 'demo');
      return result.facts.find((fact) => fact.id === 'root.received')?.value;
    };
    expect(await rootFact()).toBe('no');

    const denied = await observe(pkg, (options) =>
      core.plugins.operate(pkg.id, 'demo', 'touch', {}, options),
    );
    record('operate without the project.operate grant', denied);
    expect(denied.error).toBeInstanceOf(PermissionDeniedError);
    expect(denied.error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(denied.spawned).toEqual([]);
    expect(denied.detail.health).toBe('healthy');

    await core.plugins.enable(pkg.id, ['project.metadata.read', 'project.files.read'], ACTOR);
    expect(await rootFact()).toBe(`yes: ${projectRoot}`);
  });
});

// ---- helpers ----------------------------------------------------------------------------

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}

/** Replaces a file by a sparse one of `size` bytes, keeping mode 0755. Never reads or writes its body. */
async function sparse(path: string, size: number): Promise<void> {
  const handle = await open(path, 'w', 0o755);
  try {
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
  await chmod(path, 0o755);
}
