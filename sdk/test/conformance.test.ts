// The conformance kit against real processes: a hand-written plugin (no SDK)
// that is correct by default and broken in one way per mode, the example
// plugins, and the CLI as a subprocess.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_SCHEMA_VERSION, PROTOCOL_VERSION } from '../src/constants.js';
import { runConformance, type ConformanceReport } from '../src/conformance/run.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const handwritten = join(here, 'fixtures', 'handwritten-plugin.mjs');
const cli = join(repo, 'sdk', 'dist', 'conformance', 'cli.js');
const inspectorDist = join(repo, 'examples', 'plugins', 'fixture-inspector', 'dist');
const nativeDist = join(repo, 'examples', 'plugins', 'native-fixture', 'dist');

/** Fails (never skips) when a built artifact a test runs is missing. */
function requireBuilt(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} does not exist: run \`npm run build\` first`);
}

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'sdk-conformance-test-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** A package directory holding the hand-written plugin, started with `mode` as its first argument. */
async function handwrittenPackage(mode: string | undefined): Promise<string> {
  // A fresh directory per call: concurrent tests may build the same mode.
  const dir = await mkdtemp(join(workDir, `${mode ?? 'correct'}-`));
  const executable = join(dir, 'handwritten-plugin.mjs');
  await copyFile(handwritten, executable);
  await chmod(executable, 0o755);
  const manifest = {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    id: 'handwritten',
    name: 'Hand-written plugin',
    version: '0.4.0',
    protocolVersion: PROTOCOL_VERSION,
    executable: 'handwritten-plugin.mjs',
    ...(mode === undefined ? {} : { arguments: [mode] }),
    ...(mode?.startsWith('operate')
      ? {
          capabilities: ['project.inspect', 'project.operate'],
          requestedScopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
        }
      : {
          capabilities: ['project.inspect'],
          requestedScopes: ['project.metadata.read', 'project.files.read'],
        }),
  };
  await writeFile(join(dir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644 });
  return dir;
}

const failed = (report: ConformanceReport) => report.checks.filter((check) => check.status === 'fail');
const describeReport = (report: ConformanceReport) =>
  report.checks
    .map((check) => `${check.status} ${check.name}${check.detail ? `: ${check.detail}` : ''}`)
    .join('\n');

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [cli, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolvePromise({ code, stdout, stderr });
    });
  });
}

describe('runConformance on a hand-written plugin', () => {
  it('passes when the plugin is correct', async () => {
    const report = await runConformance(await handwrittenPackage(undefined));
    expect(report.ok, describeReport(report)).toBe(true);
    expect(report.plugin).toEqual({ id: 'handwritten', version: '0.4.0' });
    // Every protocol check ran (none skipped except the ones this manifest cannot exercise).
    expect(report.checks.filter((check) => check.status === 'pass').length).toBeGreaterThanOrEqual(18);
    // (It declares project.inspect only: the project.operate checks are the ones it cannot exercise.)
    expect(
      report.checks.filter(
        (check) => check.status === 'skip' && check.detail !== 'plugin does not declare project.operate',
      ),
    ).toEqual([]);
    expect(report.checks.filter((check) => check.status === 'skip')).toHaveLength(3);
  });

  it('passes a plugin that declares project.operate: the operate checks run and pass', async () => {
    const dir = await handwrittenPackage('operates');
    const report = await runConformance(dir);
    expect(report.ok, describeReport(report)).toBe(true);
    const operate = report.checks.filter((check) => check.name.startsWith('project.operate'));
    expect(
      operate.map((check) => check.status),
      describeReport(report),
    ).toEqual(['pass', 'pass', 'pass']);
    // It ran the listed action whose risk is none (trimmed, any case), never the first, risky one.
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('handwritten.noop\n');
  });

  it('never runs an action whose risk is not none unless --action names it', async () => {
    const dir = await handwrittenPackage('operates-risky-only');
    const report = await runConformance(dir);
    expect(report.ok, describeReport(report)).toBe(true);
    const check = report.checks.find((entry) => entry.name.startsWith('project.operate runs'))!;
    expect(check.status).toBe('skip');
    expect(check.detail).toMatch(/no listed action has risk "none".*--action <id>.*handwritten\.wipe/);
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false);

    const named = await runConformance(dir, { action: 'handwritten.wipe' });
    expect(named.ok, describeReport(named)).toBe(true);
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('handwritten.wipe\n');

    const unlisted = await runConformance(dir, { action: 'handwritten.other' });
    expect(unlisted.ok).toBe(false);
    expect(failed(unlisted).map((entry) => entry.detail)).toEqual([
      '--action handwritten.other: project.inspect does not list it (it lists handwritten.wipe)',
    ]);
  });

  // [mode, a check that must fail, text its detail must contain, only these checks may fail?]
  const broken: [string, string, string, boolean][] = [
    [
      'unknown-result-field',
      'initialize negotiates the protocol and echoes the exact identity',
      'unknown field',
      false,
    ],
    [
      'wrong-identity',
      'initialize negotiates the protocol and echoes the exact identity',
      'plugin.version',
      true,
    ],
    ['ignores-grants', 'a declared capability whose scope is not granted → -32003', '-32003', false],
    ['ignores-grants', 'root sent without project.files.read → -32003', '-32003', false],
    [
      'stdout-noise',
      'initialize negotiates the protocol and echoes the exact identity',
      'not exactly one JSON document',
      false,
    ],
    ['crashes', 'initialize negotiates the protocol and echoes the exact identity', 'closed stdout', false],
    ['lingers', 'exits within 3 s once stdin closes', 'still running', true],
    [
      'echoes-requested',
      'initialize with a strict subset of the requested scopes echoes exactly that subset',
      'but the plugin echoed',
      true,
    ],
    [
      'string-ids',
      'initialize negotiates the protocol and echoes the exact identity',
      'does not echo',
      false,
    ],
    [
      'operate-ignores-grants',
      'project.operate without the project.operate grant → -32003',
      'expected error -32003, got -32000',
      false, // the declared-capability check catches it too
    ],
    [
      'operate-any-action',
      'project.operate with an unknown action → -32000',
      'expected error -32000, got a result',
      true,
    ],
  ];

  describe.concurrent('fails, and says why, when the plugin', () => {
    it.each(broken)('%s (check: %s)', async (mode, checkName, text, onlyThisCheck) => {
      const report = await runConformance(await handwrittenPackage(mode));
      expect(report.ok, describeReport(report)).toBe(false);
      const check = report.checks.find((candidate) => candidate.name === checkName);
      expect(check, describeReport(report)).toBeDefined();
      expect(check!.status, describeReport(report)).toBe('fail');
      expect(check!.detail).toContain(text);
      if (onlyThisCheck) expect(failed(report).map((failure) => failure.name)).toEqual([checkName]);
    });
  });

  it('crashes: also reports checks that never reach initialize as passing', async () => {
    const report = await runConformance(await handwrittenPackage('crashes'));
    const status = (name: string) => report.checks.find((check) => check.name === name)?.status;
    expect(status('a call before initialize → -32002')).toBe('pass');
    expect(status('an unknown envelope field → -32700 with id null')).toBe('pass');
    expect(status('plugin.health answers a valid result')).toBe('fail');
  });

  it('fails before starting anything when the executable is group-writable', async () => {
    const dir = await handwrittenPackage(undefined);
    await chmod(join(dir, 'handwritten-plugin.mjs'), 0o775);
    const report = await runConformance(dir);
    expect(report.ok).toBe(false);
    expect(report.checks.map((check) => check.status)).toEqual(['pass', 'fail']);
    expect(report.checks[1]!.detail).toContain('group-writable');
    await chmod(join(dir, 'handwritten-plugin.mjs'), 0o755);
  });
});

describe('switchyard-plugin-conformance CLI', () => {
  const checkLine = /^(ok {2}|FAIL|skip) {2}\S/;

  it('passes fixture-inspector: exit 0, one line per check, a final PASS line', async () => {
    requireBuilt(cli);
    requireBuilt(join(inspectorDist, 'fixture-inspector'));
    const { code, stdout, stderr } = await runCli([inspectorDist]);
    expect(code, stdout + stderr).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const summary = lines.pop()!;
    const match = /^PASS {2}fixture-inspector 1\.0\.0: (\d+) passed, 0 failed, (\d+) skipped$/.exec(summary);
    expect(match, summary).not.toBeNull();
    expect(
      lines.every((line) => checkLine.test(line)),
      stdout,
    ).toBe(true);
    expect(lines.some((line) => line.startsWith('FAIL'))).toBe(false);
    expect(lines).toHaveLength(Number(match![1]) + Number(match![2]));
    const report = await runConformance(inspectorDist);
    expect(lines.map((line) => line.slice(6).split(': ')[0])).toEqual(
      report.checks.map((check) => check.name),
    );
  });

  it('fails a broken plugin: exit 1, a FAIL line naming the check, a final FAIL line', async () => {
    requireBuilt(cli);
    const { code, stdout } = await runCli([await handwrittenPackage('wrong-identity')]);
    expect(code, stdout).toBe(1);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^FAIL {2}initialize negotiates the protocol and echoes the exact identity: .*plugin\.version/,
      ),
    );
    expect(lines.at(-1)).toMatch(/^FAIL {2}handwritten 0\.4\.0: \d+ passed, 1 failed, \d+ skipped$/);
  });

  it('passes the native fixture: exit 0', async () => {
    requireBuilt(cli);
    requireBuilt(join(nativeDist, 'native-fixture'));
    const { code, stdout, stderr } = await runCli([nativeDist]);
    expect(code, stdout + stderr).toBe(0);
    // It ignores an empty line instead of answering -32700: a strict check, so a warning.
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^PASS {2}native-fixture \S+: \d+ passed, 0 failed, \d+ skipped(, 1 warning)?$/,
    );
  });

  it('exits 2 with usage when no package directory is given', async () => {
    requireBuilt(cli);
    const { code, stderr } = await runCli([]);
    expect(code).toBe(2);
    expect(stderr).toContain('usage: switchyard-plugin conformance');
  });
});
