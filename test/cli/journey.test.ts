// A new user's path through the CLI, from an empty data dir to a finished
// operation, as real subprocesses against an owned Redis and a real worker:
// plugin refresh → show → trust → enable → project scan → inspect → run →
// op show → audit.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { cliOn, onlyJson, requireBuiltCli, startWorker, stopAll, type Installation } from './support.js';

const OPERATION_FIELDS = [
  'id',
  'pluginId',
  'projectId',
  'action',
  'state',
  'errorCode',
  'errorMessage',
  'result',
  'requestedAt',
  'startedAt',
  'finishedAt',
  'input',
  'requestedBy',
  'worker',
  'durationMs',
];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let redis: OwnedRedis;
let root: string;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-journey-'));
  const dataDir = join(root, 'data');
  // An empty data dir, then the package copied in the way a user would.
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', 'fixture-inspector'), { recursive: true });
  const projects = join(root, 'projects');
  await mkdir(join(projects, 'Shop'), { recursive: true });
  await writeFile(join(projects, 'Shop', 'package.json'), '{}\n');
  await mkdir(join(projects, 'blog'), { recursive: true });
  await writeFile(join(projects, 'blog', 'go.mod'), 'module blog\n');
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-journey') };
  cli = cliOn(installation);
  // A real worker process, where the queued work executes.
  await startWorker(installation, 2);
});

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a new user, from an empty data dir to a finished operation', () => {
  let fingerprint = '';
  let operationId = '';

  it('plugin refresh discovers the copied package, untrusted and disabled', async () => {
    const result = await cli(['plugin', 'refresh']);
    expect(result.code, result.stderr).toBe(0);
    const row = result.stdout.split('\n').find((line) => line.trim().startsWith('fixture-inspector'));
    expect(row, result.stdout).toBeDefined();
    expect(row).toMatch(/\buntrusted\b/);
    expect(row).toMatch(/\bno\b/);
  });

  it('plugin show prints the full fingerprint and the OS trust boundary statement', async () => {
    const result = await cli(['plugin', 'show', 'fixture-inspector']);
    expect(result.code, result.stderr).toBe(0);
    const match = /^fingerprint\s+([0-9a-f]{64})\s*$/m.exec(result.stdout);
    expect(match, result.stdout).not.toBeNull();
    fingerprint = match![1]!;
    expect(result.stdout).toMatch(/Plugins run with the operating-system identity/);
    for (const scope of ['project.metadata.read', 'project.files.read', 'project.operate'])
      expect(result.stdout).toContain(scope);

    // The reviewer's fingerprint is the one the JSON document carries.
    const json = onlyJson<{ fingerprint: string; trust: string; enabled: boolean }>(
      await cli(['--json', 'plugin', 'show', 'fixture-inspector']),
    );
    expect(json).toMatchObject({ fingerprint, trust: 'untrusted', enabled: false });
  });

  it('plugin enable before the trust is refused (exit 2), naming plugin show and plugin trust as the fix', async () => {
    const result = await cli([
      'plugin',
      'enable',
      'fixture-inspector',
      '--scope',
      'project.metadata.read',
      '--yes',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/plugin fixture-inspector is not trusted/);
    expect(result.stderr).toContain('`plugin show fixture-inspector`');
    expect(result.stderr).toContain('`plugin trust fixture-inspector --fingerprint <fingerprint> --yes`');
  });

  it('plugin trust --fingerprint <fp> --yes records trust; the plugin stays disabled', async () => {
    const result = await cli(['plugin', 'trust', 'fixture-inspector', '--fingerprint', fingerprint, '--yes']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(fingerprint);
    const json = onlyJson<{ trust: string; enabled: boolean; grantedScopes: string[] }>(
      await cli(['--json', 'plugin', 'show', 'fixture-inspector']),
    );
    expect(json).toMatchObject({ trust: 'trusted', enabled: false, grantedScopes: [] });
  });

  it('plugin enable --scope … --yes grants exactly those scopes', async () => {
    const result = await cli([
      'plugin',
      'enable',
      'fixture-inspector',
      '--scope',
      'project.metadata.read',
      '--scope',
      'project.files.read',
      '--scope',
      'project.operate',
      '--yes',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const json = onlyJson<{ enabled: boolean; grantedScopes: string[]; health: string }>(
      await cli(['--json', 'plugin', 'show', 'fixture-inspector']),
    );
    expect(json.enabled).toBe(true);
    expect([...json.grantedScopes].sort()).toEqual([
      'project.files.read',
      'project.metadata.read',
      'project.operate',
    ]);
  });

  it('project scan <dir> --trust registers each subdirectory, trusted', async () => {
    const result = await cli(['project', 'scan', join(root, 'projects'), '--trust']);
    expect(result.code, result.stderr).toBe(0);
    const projects = onlyJson<{ id: string; displayName: string; root: string; trusted: boolean }[]>(
      await cli(['--json', 'project', 'list']),
    );
    expect(projects.map((project) => project.id).sort()).toEqual(['blog', 'shop']);
    expect(projects.find((project) => project.id === 'shop')).toEqual({
      id: 'shop',
      displayName: 'Shop',
      root: join(root, 'projects', 'Shop'),
      trusted: true,
      labels: [],
      rootMissing: false,
    });
    expect(projects.every((project) => project.trusted)).toBe(true);
  });

  it('inspect --all --json prints one batch document and exits 0', async () => {
    const result = await cli(['--json', 'inspect', 'fixture-inspector', '--all'], 45_000);
    expect(result.code, result.stderr).toBe(0);
    const batch = onlyJson<{
      batchId: string;
      total: number;
      succeeded: number;
      failed: number;
      results: { projectId: string; status: string; result?: { summary: string; facts: unknown[] } }[];
    }>(result);
    expect(batch.batchId).toEqual(expect.any(String));
    expect(batch).toMatchObject({ total: 2, succeeded: 2, failed: 0 });
    expect(batch.results.map((outcome) => outcome.projectId).sort()).toEqual(['blog', 'shop']);
    for (const outcome of batch.results) {
      expect(
        Object.keys(outcome).every((key) => ['projectId', 'status', 'result', 'error'].includes(key)),
      ).toBe(true);
      expect(outcome.status).toBe('succeeded');
      expect(outcome.result?.facts).toHaveLength(1);
    }
    const shop = batch.results.find((outcome) => outcome.projectId === 'shop');
    expect(shop?.result?.facts).toEqual([expect.objectContaining({ value: 'package.json' })]);

    // batch show returns the same document.
    const shown = onlyJson<typeof batch>(await cli(['--json', 'batch', 'show', batch.batchId]));
    expect(shown).toMatchObject({ batchId: batch.batchId, total: 2, succeeded: 2, failed: 0 });
  });

  it('run … --input {"x":1} --yes --wait --json follows the operation to succeeded', async () => {
    const run = await cli(
      ['--json', 'run', 'fixture-inspector', 'shop', 'fixture.echo', '--input', '{"x":1}', '--yes', '--wait'],
      45_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const operation = onlyJson<{ id: string; state: string; result?: { output: unknown } }>(run);
    expect(operation.state).toBe('succeeded');
    expect(operation.result?.output).toEqual({ x: 1 });
    operationId = operation.id;
  });

  it('op show <id> --json has the docs/CLI.md shape', async () => {
    expect(operationId).not.toBe('');
    const result = await cli(['--json', 'op', 'show', operationId]);
    expect(result.code, result.stderr).toBe(0);
    const operation = onlyJson<Record<string, unknown>>(result);
    expect(Object.keys(operation).filter((key) => !OPERATION_FIELDS.includes(key))).toEqual([]);
    expect(operation).toMatchObject({
      id: operationId,
      pluginId: 'fixture-inspector',
      projectId: 'shop',
      action: 'fixture.echo',
      state: 'succeeded',
      result: expect.objectContaining({ output: { x: 1 } }),
    });
    expect(operation).not.toHaveProperty('errorCode');
    for (const field of ['requestedAt', 'startedAt', 'finishedAt'])
      expect(operation[field]).toMatch(ISO_TIME);
  });

  it('audit --json records the trust, the grant and the operation request', async () => {
    const result = await cli(['--json', 'audit']);
    expect(result.code, result.stderr).toBe(0);
    const entries = onlyJson<{ action: string; target: string; actor: string }[]>(result);
    expect(Array.isArray(entries)).toBe(true);
    const actions = entries.map((entry) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['plugin.trust', 'plugin.enable', 'operation.request']));
    expect(entries.find((entry) => entry.action === 'plugin.trust')).toMatchObject({
      target: 'fixture-inspector',
      actor: expect.stringMatching(/^user:/),
    });
    expect(entries.find((entry) => entry.action === 'operation.request')?.target).toBe(operationId);
  });
});
