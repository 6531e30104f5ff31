// Plugins built with the Go original's SDK (PROTOCOL §6, §8), played by
// test/fixtures/go-sdk-plugin.mjs, which answers every request line of
// GO-SDK-WIRE.md's table as the real Go SDK does (one test per row below): its
// handler errors carry `result` AND `error`, an invalid operate status is the
// zero result AND -32603, inspect params are strict, health params lenient,
// an empty line is -32700, an over-long line stops it. Through the host's
// supervisor a -32000 from it is the plugin's error (PLUGIN_ERROR with its
// message, not a fault), a -32603 a fault; through the conformance kit it
// passes every required check and only warns on three strict ones.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '@switchyard/plugin-sdk/conformance';
import type { Core } from '../../src/core/runtime/core-services.js';
import { MalformedResponseError, PluginCallError } from '../../src/core/platform/errors.js';
import { trustAndEnable, useCoreSuite, useDataDir } from '../support/core-suite.js';
import { REPO, makeProject } from '../support/data-dir.js';
import { installFixturePackage } from '../support/manifest.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'go-sdk-plugin.mjs');
const KIT = join(REPO, 'node_modules', '.bin', 'switchyard-plugin-conformance');
const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const ACTOR = 'user:test';
// The real Go SDK answers an empty line with -32700 and id null (GO-SDK-WIRE.md), so it passes that check.
const STRICT_CHECKS = [
  'a request line over 1048576 bytes → -32700, then it keeps serving',
  'an unknown params field → -32602',
  'error responses carry `error` only, no `result` beside it',
];

const files = useDataDir();
let dataDir: string;
beforeAll(() => void ({ dataDir } = files));

/** <parent>/plugins/<id>: the fixture and its plugin.json, started with `mode` as its argument. */
function installGoPlugin(parent: string, id: string, mode?: string): Promise<string> {
  return installFixturePackage(join(parent, 'plugins', id), FIXTURE, {
    id,
    name: 'Go SDK plugin',
    executable: 'go-sdk-plugin.mjs',
    ...(mode ? { arguments: [mode] } : {}),
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: ALL_SCOPES,
  });
}

/** The names of the checks the kit's output lines mark with `marker` ("warn  ", "FAIL  "), sorted. */
function checksMarked(lines: string[], marker: string): string[] {
  return lines
    .filter((line) => line.startsWith(marker))
    .map((line) => line.slice(marker.length).split(': ')[0]!)
    .sort();
}

function runKit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KIT, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

const INIT_PARAMS = {
  protocolVersion: 'switchyard.plugin/v1',
  hostVersion: '0.1.0',
  grantedScopes: ALL_SCOPES,
};
const line = (id: unknown, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
const INIT = line(1, 'initialize', INIT_PARAMS);
const PROJECT = { id: 'demo', displayName: 'Demo', root: '/tmp' };

interface Answer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** Sends the lines to the installed fixture in `dir`, closes stdin, and reads every answer and its exit. */
function exchange(
  dir: string,
  lines: string[],
  args: string[] = [],
): Promise<{ answers: Answer[]; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, 'go-sdk-plugin.mjs'), ...args], { cwd: dir });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stdin.on('error', () => {});
    child.on('close', (code) =>
      resolve({
        answers: out
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as Answer),
        code,
      }),
    );
    child.stdin.end(lines.map((text) => `${text}\n`).join(''));
  });
}

/** (id, result present?, error code) as GO-SDK-WIRE.md writes each answer. */
const shape = (answer: Answer | undefined) =>
  answer && [answer.id, answer.result !== undefined, answer.error?.code ?? null];

describe('the stand-in answers as the real Go SDK does (GO-SDK-WIRE.md, one row each)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await installGoPlugin(dataDir, 'go-wire');
  });

  it('a handler error (inspect / operate): result AND -32000', async () => {
    const inspect = await exchange(
      dir,
      [INIT, line(2, 'project.inspect', { project: PROJECT })],
      ['fail-inspect'],
    );
    expect(shape(inspect.answers[1])).toEqual([2, true, -32000]);
    const operate = await exchange(dir, [
      INIT,
      line(2, 'project.operate', { project: PROJECT, action: 'fail', input: {} }),
    ]);
    expect(shape(operate.answers[1])).toEqual([2, true, -32000]);
  });

  it('an operate handler that returns an invalid status: the zero result AND -32603', async () => {
    const { answers } = await exchange(dir, [
      INIT,
      line(2, 'project.operate', { project: PROJECT, action: 'bad-status', input: {} }),
    ]);
    expect(answers[1]).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { status: '', summary: '', output: null },
      error: { code: -32603, message: 'plugin returned an invalid operation status' },
    });
  });

  it('plugin.health with unknown params fields: a result', async () => {
    const { answers } = await exchange(dir, [INIT, line(2, 'plugin.health', { extra: true })]);
    expect(shape(answers[1])).toEqual([2, true, null]);
  });

  it('project.inspect with an unknown params field: -32602', async () => {
    const { answers } = await exchange(dir, [
      INIT,
      line(2, 'project.inspect', { project: PROJECT, extra: 1 }),
    ]);
    expect(shape(answers[1])).toEqual([2, false, -32602]);
  });

  it('an unknown field inside params.project: -32602', async () => {
    const { answers } = await exchange(dir, [
      INIT,
      line(2, 'project.inspect', { project: { ...PROJECT, extra: 1 } }),
    ]);
    expect(shape(answers[1])).toEqual([2, false, -32602]);
  });

  it('initialize with grantedScopes of the wrong type: -32602', async () => {
    const { answers } = await exchange(dir, [
      line(1, 'initialize', { ...INIT_PARAMS, grantedScopes: 'project.operate' }),
    ]);
    expect(shape(answers[0])).toEqual([1, false, -32602]);
  });

  it('params as an array: -32602 with the id echoed', async () => {
    const { answers } = await exchange(dir, [line(1, 'initialize', [INIT_PARAMS])]);
    expect(shape(answers[0])).toEqual([1, false, -32602]);
  });

  it('params null: decoded as {} (initialize answers -32001)', async () => {
    const { answers } = await exchange(dir, [line(1, 'initialize', null)]);
    expect(shape(answers[0])).toEqual([1, false, -32001]);
  });

  it('an empty line: (null, -32700), then it keeps serving', async () => {
    const { answers } = await exchange(dir, ['', INIT]);
    expect(answers.map(shape)).toEqual([
      [null, false, -32700],
      [1, true, null],
    ]);
  });

  it('an empty method: (null, -32700)', async () => {
    const { answers } = await exchange(dir, [line(1, '')]);
    expect(shape(answers[0])).toEqual([null, false, -32700]);
  });

  it('a boolean id: echoed as sent, -32002 before initialize', async () => {
    const { answers } = await exchange(dir, [line(true, 'plugin.health', {})]);
    expect(shape(answers[0])).toEqual([true, false, -32002]);
  });

  it('project.operate without the project.operate grant: -32003', async () => {
    const init = line(1, 'initialize', { ...INIT_PARAMS, grantedScopes: ['project.metadata.read'] });
    const { answers } = await exchange(dir, [
      init,
      line(2, 'project.operate', { project: PROJECT, action: 'x', input: {} }),
    ]);
    expect(shape(answers[1])).toEqual([2, false, -32003]);
  });

  it('a granted scope that is no known scope value: -32003', async () => {
    const { answers } = await exchange(dir, [
      line(1, 'initialize', { ...INIT_PARAMS, grantedScopes: ['project.everything'] }),
    ]);
    expect(shape(answers[0])).toEqual([1, false, -32003]);
  });

  it("the fixture's inspect without project.files.read: result AND -32000, in the Go fixture's words", async () => {
    const init = line(1, 'initialize', { ...INIT_PARAMS, grantedScopes: ['project.metadata.read'] });
    const { id: projectId, displayName } = PROJECT;
    const { answers } = await exchange(dir, [
      init,
      line(2, 'project.inspect', { project: { id: projectId, displayName } }),
    ]);
    expect(shape(answers[1])).toEqual([2, true, -32000]);
    expect(answers[1]?.error?.message).toBe('fixture inspection requires project.files.read');
  });

  it("the fixture's unknown action: result AND -32000 `unknown fixture action`", async () => {
    const { answers } = await exchange(dir, [
      INIT,
      line(2, 'project.operate', { project: PROJECT, action: 'go.nothing-such', input: {} }),
    ]);
    expect(shape(answers[1])).toEqual([2, true, -32000]);
    expect(answers[1]?.error?.message).toBe('unknown fixture action');
  });

  it('a request line over 1 MiB: it exits without answering', async () => {
    const { answers, code } = await exchange(dir, [
      `${line(1, 'initialize', { ...INIT_PARAMS, pad: 'x'.repeat(1_048_576) })}`,
    ]);
    expect(answers).toEqual([]);
    expect(code).not.toBe(0);
  });
});

describe('the conformance kit and a Go-SDK plugin', () => {
  it('passes every required check; the strict ones are warnings', async () => {
    const report = await runConformance(await installGoPlugin(dataDir, 'go-kit-report'));
    const summary = report.checks.map((check) => `${check.status} ${check.name}: ${check.detail ?? ''}`);
    expect(report.ok, summary.join('\n')).toBe(true);
    const required = report.checks.filter((check) => check.level === 'required');
    expect(required.filter((check) => check.status !== 'pass' && check.status !== 'skip')).toEqual([]);
    const warned = report.checks.filter((check) => check.status === 'warn').map((check) => check.name);
    expect(warned.sort()).toEqual([...STRICT_CHECKS].sort());
    expect(report.checks.filter((check) => check.status === 'warn').every((c) => c.level === 'strict')).toBe(
      true,
    );
  });

  it('CLI (the installed bin): exit 0 with warn lines; --strict makes them FAIL and exits 1', async () => {
    const dir = await installGoPlugin(dataDir, 'go-kit-cli');
    const relaxed = await runKit([dir]);
    expect(relaxed.code, relaxed.stdout + relaxed.stderr).toBe(0);
    const lines = relaxed.stdout.trimEnd().split('\n');
    const summary = lines.pop();
    expect(checksMarked(lines, 'warn  ')).toEqual([...STRICT_CHECKS].sort());
    expect(lines.some((line) => line.startsWith('FAIL'))).toBe(false);
    expect(summary).toMatch(/^PASS {2}go-kit-cli 1\.0\.0: \d+ passed, 0 failed, \d+ skipped, 3 warnings$/);

    const strict = await runKit([dir, '--strict']);
    expect(strict.code, strict.stdout + strict.stderr).toBe(1);
    const strictLines = strict.stdout.trimEnd().split('\n');
    const strictSummary = strictLines.pop();
    expect(checksMarked(strictLines, 'FAIL  ')).toEqual([...STRICT_CHECKS].sort());
    expect(strictSummary).toMatch(/^FAIL {2}go-kit-cli 1\.0\.0: \d+ passed, 3 failed, \d+ skipped$/);
  });
});

describe('the host and a Go-SDK plugin', () => {
  const host = useCoreSuite('go-compat', {
    processActor: 'test-worker',
    callPolicy: { limits: { callTimeoutMs: 5_000, graceMs: 3_000 }, requireConfinement: false },
  });
  let core: Core;
  let hostDir: string;

  beforeAll(async () => {
    ({ core, dataDir: hostDir } = host);
    await core.projects.add(await makeProject(hostDir, 'demo', ['package.json']), { trust: true }, ACTOR);
    await installGoPlugin(hostDir, 'go-ok');
    await installGoPlugin(hostDir, 'go-failing', 'fail-inspect');
    await installGoPlugin(hostDir, 'go-bad-status');
    for (const id of ['go-ok', 'go-failing', 'go-bad-status']) {
      expect(await trustAndEnable(core, id, ALL_SCOPES, ACTOR)).toMatchObject({
        enabled: true,
        health: 'healthy',
      });
    }
  });

  it('a successful inspect of a Go-SDK plugin returns its result', async () => {
    const result = await core.plugins.inspect('go-ok', 'demo');
    expect(result.summary).toBe('go-sdk-plugin inspected demo');
  });

  it('its -32000 (result AND error in one response) reaches the caller as PLUGIN_ERROR with its message', async () => {
    const error = await core.plugins.inspect('go-failing', 'demo').catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(MalformedResponseError);
    expect(error).toBeInstanceOf(PluginCallError);
    expect(error).toMatchObject({ code: 'PLUGIN_ERROR', rpcCode: -32000 });
    expect((error as PluginCallError).rpcMessage).toBe('inspection failed: disk full');
    expect((error as Error).message).toContain('inspection failed: disk full');
  });

  it('its -32603 (an invalid operation status) is PLUGIN_ERROR -32603 and a fault: the plugin becomes unhealthy', async () => {
    const error = await core.plugins
      .operate('go-bad-status', 'demo', 'bad-status', {})
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PluginCallError);
    expect(error).toMatchObject({
      code: 'PLUGIN_ERROR',
      rpcCode: -32603,
      rpcMessage: 'plugin returned an invalid operation status',
    });
    expect(await core.plugins.show('go-bad-status')).toMatchObject({ health: 'unhealthy' });
  });

  it('its -32000 is not a fault: health stays as it was', async () => {
    await core.plugins.inspect('go-failing', 'demo').catch(() => undefined);
    expect(await core.plugins.show('go-failing')).toMatchObject({ health: 'healthy' });
  });
});
