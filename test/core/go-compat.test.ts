// Plugins built with the Go original's SDK (PROTOCOL §6, §8), played by
// test/fixtures/go-sdk-plugin.mjs, which speaks exactly like one on the wire:
// its handler errors carry `result` AND `error`, it tolerates unknown params
// fields, stops on an over-long line and skips blank lines. Through the
// host's supervisor a -32000 from it is the plugin's error (PLUGIN_ERROR with
// its message), never MALFORMED_RESPONSE; through the conformance kit it
// passes every required check and only warns on the strict ones.
import { execFile } from 'node:child_process';
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
const STRICT_CHECKS = [
  'a request line over 1048576 bytes → -32700, then it keeps serving',
  'an empty line → -32700 with id null, then it keeps serving',
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
    expect(summary).toMatch(/^PASS {2}go-kit-cli 1\.0\.0: \d+ passed, 0 failed, \d+ skipped, 4 warnings$/);

    const strict = await runKit([dir, '--strict']);
    expect(strict.code, strict.stdout + strict.stderr).toBe(1);
    const strictLines = strict.stdout.trimEnd().split('\n');
    const strictSummary = strictLines.pop();
    expect(checksMarked(strictLines, 'FAIL  ')).toEqual([...STRICT_CHECKS].sort());
    expect(strictSummary).toMatch(/^FAIL {2}go-kit-cli 1\.0\.0: \d+ passed, 4 failed, \d+ skipped$/);
  });
});

describe('the host and a Go-SDK plugin', () => {
  const host = useCoreSuite('go-compat', {
    processActor: 'test-worker',
    limits: { callTimeoutMs: 5_000, graceMs: 3_000 },
  });
  let core: Core;
  let hostDir: string;

  beforeAll(async () => {
    ({ core, dataDir: hostDir } = host);
    await core.projects.add(await makeProject(hostDir, 'demo', ['package.json']), { trust: true }, ACTOR);
    await installGoPlugin(hostDir, 'go-ok');
    await installGoPlugin(hostDir, 'go-failing', 'fail-inspect');
    for (const id of ['go-ok', 'go-failing']) {
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
});
