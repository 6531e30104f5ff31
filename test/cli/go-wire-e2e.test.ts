// Go compatibility end to end (GO-SDK-WIRE.md, "Host side"), through the CLI and
// the HTTP API, with a real api, a real worker and an owned Redis:
// - `run <plugin> <project> <action> --yes --wait` without --input, and
//   POST /api/v1/operations without `input`, send the plugin `"input": {}`, as
//   the original host did (the queue fixture answers with the input it got);
// - a Go-SDK plugin's -32603 (an invalid operation status), through `run` and
//   through POST /api/v1/operations, fails the operation with PLUGIN_ERROR and
//   makes the plugin `unhealthy` (played by test/fixtures/go-sdk-plugin.mjs).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, call, setUpApi, startWorker, type Api, type ApiSetup } from '../api/support.js';
import { REPO } from '../support/data-dir.js';
import { installFixturePackage } from '../support/manifest.js';
import { PLUGIN_ID as QUEUE, installQueuePlugin } from '../support/workers.js';
import { waitFor } from '../support/wait.js';
import { cliOn, onlyJson, type CliResult } from './support.js';

const GO_FIXTURE = join(REPO, 'test', 'fixtures', 'go-sdk-plugin.mjs');
/** One Go-SDK plugin per path, so that each path's health is its own. */
const GO_CLI = 'go-sdk-cli';
const GO_API = 'go-sdk-api';

interface Operation {
  id: string;
  state: string;
  errorCode?: string;
  errorMessage?: string;
  result?: { status: string; output?: unknown };
}

let setup: ApiSetup | undefined;
let api: Api;
let cli: ReturnType<typeof cliOn>;
const packageDirs: Record<string, string> = {};

function installGoPlugin(dataDir: string, id: string): Promise<string> {
  return installFixturePackage(join(dataDir, 'plugins', id), GO_FIXTURE, {
    id,
    name: 'Go SDK plugin',
    executable: 'go-sdk-plugin.mjs',
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: ALL_SCOPES,
  });
}

function ok(result: CliResult): CliResult {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

/** GET /api/v1/operations/:id until the operation has ended. */
function operationEnded(id: string): Promise<Operation> {
  return waitFor(
    `operation ${id} to end`,
    async () => {
      const got = await call<Operation>(api, 'GET', `/api/v1/operations/${id}`, { token: api.adminToken });
      expect(got.status, got.text).toBe(200);
      return ['succeeded', 'failed', 'cancelled'].includes(got.json.state) ? got.json : undefined;
    },
    45_000,
  );
}

async function healthOf(id: string): Promise<string> {
  const got = await call<{ health: string }>(api, 'GET', `/api/v1/plugins/${id}`, { token: api.adminToken });
  expect(got.status, got.text).toBe(200);
  return got.json.health;
}

beforeAll(async () => {
  setup = await setUpApi('go-wire-e2e', async (root, dataDir) => {
    await mkdir(join(root, 'projects', 'shop'), { recursive: true });
    await writeFile(join(root, 'projects', 'shop', 'package.json'), '{}\n');
    packageDirs[QUEUE] = await installQueuePlugin(dataDir);
    for (const id of [GO_CLI, GO_API]) packageDirs[id] = await installGoPlugin(dataDir, id);
  });
  api = setup.api;
  cli = cliOn(setup.installation);
  await startWorker(setup.installation);
  ok(await cli(['plugin', 'refresh']));
  for (const id of [QUEUE, GO_CLI, GO_API]) {
    const { fingerprint } = onlyJson<{ fingerprint: string }>(
      ok(await cli(['--json', 'plugin', 'show', id])),
    );
    ok(await cli(['plugin', 'trust', id, '--fingerprint', fingerprint, '--yes']));
    if (id === QUEUE) {
      // The queue fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
      ok(await cli(['plugin', 'set', id, '--allow-write', packageDirs[id]!, '--allow-read', '/proc']));
    }
    ok(await cli(['plugin', 'enable', id, ...ALL_SCOPES.flatMap((scope) => ['--scope', scope]), '--yes']));
  }
  ok(await cli(['project', 'scan', join(setup.root, 'projects'), '--trust']));
}, 120_000);

afterAll(async () => {
  await setup?.close();
});

describe('an operation without input sends the plugin "input": {}', () => {
  it('run <plugin> <project> <action> --yes --wait, no --input', async () => {
    const run = await cli(['--json', 'run', QUEUE, 'shop', 'noop', '--yes', '--wait'], 60_000);
    const operation = onlyJson<Operation>(ok(run));
    expect(operation.state).toBe('succeeded');
    expect(operation.result?.output).toEqual({ input: {} });
  });

  it('POST /api/v1/operations, no input', async () => {
    const created = await call<{ id: string }>(api, 'POST', '/api/v1/operations', {
      token: api.adminToken,
      body: { pluginId: QUEUE, projectId: 'shop', action: 'noop' },
    });
    expect(created.status, created.text).toBe(202);
    const operation = await operationEnded(created.json.id);
    expect(operation.state).toBe('succeeded');
    expect(operation.result?.output).toEqual({ input: {} });
  });
});

describe("a Go-SDK plugin's -32603: the operation fails with PLUGIN_ERROR, the plugin becomes unhealthy", () => {
  it('through run … --yes --wait', async () => {
    // Without --input a Go-SDK plugin's action runs, and it stays healthy.
    const noop = onlyJson<Operation>(
      ok(await cli(['--json', 'run', GO_CLI, 'shop', 'go.noop', '--yes', '--wait'], 60_000)),
    );
    expect(noop.state).toBe('succeeded');
    expect(onlyJson<{ health: string }>(ok(await cli(['--json', 'plugin', 'show', GO_CLI]))).health).toBe(
      'healthy',
    );

    const run = await cli(['--json', 'run', GO_CLI, 'shop', 'bad-status', '--yes', '--wait'], 60_000);
    expect(run.code, `${run.stdout}\n${run.stderr}`).not.toBe(0);
    const failed = onlyJson<Operation>(run);
    expect(failed).toMatchObject({ state: 'failed', errorCode: 'PLUGIN_ERROR' });
    expect(failed.errorMessage).toContain('plugin returned an invalid operation status');
    const shown = onlyJson<Operation>(ok(await cli(['--json', 'op', 'show', failed.id])));
    expect(shown).toMatchObject({ state: 'failed', errorCode: 'PLUGIN_ERROR' });
    expect(onlyJson<{ health: string }>(ok(await cli(['--json', 'plugin', 'show', GO_CLI]))).health).toBe(
      'unhealthy',
    );
  });

  it('through POST /api/v1/operations', async () => {
    const noop = await call<{ id: string }>(api, 'POST', '/api/v1/operations', {
      token: api.adminToken,
      body: { pluginId: GO_API, projectId: 'shop', action: 'go.noop' },
    });
    expect(noop.status, noop.text).toBe(202);
    expect((await operationEnded(noop.json.id)).state).toBe('succeeded');
    expect(await healthOf(GO_API)).toBe('healthy');

    const created = await call<{ id: string }>(api, 'POST', '/api/v1/operations', {
      token: api.adminToken,
      body: { pluginId: GO_API, projectId: 'shop', action: 'bad-status' },
    });
    expect(created.status, created.text).toBe(202);
    const failed = await operationEnded(created.json.id);
    expect(failed).toMatchObject({ state: 'failed', errorCode: 'PLUGIN_ERROR' });
    expect(failed.errorMessage).toContain('plugin returned an invalid operation status');
    expect(await healthOf(GO_API)).toBe('unhealthy');
  });
});
