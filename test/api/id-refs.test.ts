// Ids like people type them: a unique prefix of a batch's or an operation's
// hex digits, `latest` and `latest~N` (per plugin, per project), through the
// api's resolve routes and through the CLI in local and remote mode. An
// ambiguous prefix is refused (exit 2) listing the matches; one that names
// nothing is not found; `batch diff <plugin> latest` compares the newest
// batch with the one before it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchStore } from '../../src/core/work/batches/batch-store.js';
import { keysFor, type Keys } from '../../src/core/redis/keys.js';
import { OperationStore } from '../../src/core/work/operations/operation-store.js';
import { completion } from '../support/cli-process.js';
import { call, expectProblem, globalArgs, setUpApi, spawnCli, type ApiSetup } from './support.js';

let setup: ApiSetup | undefined;
let redis: Redis;
let keys: Keys;
const batchIds: string[] = [];
const opIds: string[] = [];

beforeAll(async () => {
  setup = await setUpApi('id-refs');
  redis = new Redis(setup.redis.url);
  keys = keysFor(setup.installation.prefix);
  const batches = new BatchStore(redis, keys);
  // Oldest first: alpha, beta, alpha, beta, … each recorded so diffs have facts to compare.
  for (let index = 0; index < 6; index += 1) {
    const pluginId = index % 2 === 0 ? 'alpha' : 'beta';
    const batch = await batches.create(pluginId, ['p'], 'user:test');
    await batches.record(batch.batchId, pluginId, {
      projectId: 'p',
      status: 'succeeded',
      result: {
        summary: '',
        facts: [{ id: 'version', label: 'Version', value: `1.${index}`, source: 'test' }],
        actions: [],
        warnings: [],
        observedAt: '2026-01-01T00:00:00Z',
      },
    } as never);
    batchIds.push(batch.batchId);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  const operations = new OperationStore(redis, keys);
  for (let index = 0; index < 4; index += 1) {
    const { operation } = await operations.create({
      pluginId: index % 2 === 0 ? 'alpha' : 'beta',
      projectId: index < 2 ? 'shop' : 'blog',
      action: 'x',
      input: null,
      requestedBy: 'user:test',
    });
    opIds.push(operation.id);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await setup?.close();
});

const hex = (id: string) => id.replace(/^[a-z]+_/, '');

async function resolveRef(kind: 'batches' | 'operations', query: string) {
  const { api } = setup!;
  return call<{ id: string }>(api, 'GET', `/api/v1/${kind}/resolve?${query}`, { token: api.adminToken });
}

async function cliRun(args: string[], remote = false) {
  const { installation, api } = setup!;
  const proc = remote
    ? spawnCli(['--url', api.base, '--json', ...args], { SWITCHYARD_TOKEN: api.adminToken })
    : spawnCli([...globalArgs(installation), '--json', ...args]);
  const { code } = await completion(proc);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

describe('the api resolves references', () => {
  it('a whole id, a unique prefix (with or without batch_), latest and latest~N of a plugin', async () => {
    const newest = batchIds.at(-1)!;
    expect((await resolveRef('batches', `ref=${newest}`)).json.id).toBe(newest);
    expect((await resolveRef('batches', `ref=${hex(newest).slice(0, 8)}`)).json.id).toBe(newest);
    expect((await resolveRef('batches', `ref=batch_${hex(newest).slice(0, 6)}`)).json.id).toBe(newest);
    // As a table shows it, ellipsis and all.
    const shown = encodeURIComponent(`batch_${hex(newest).slice(0, 8)}…`);
    expect((await resolveRef('batches', `ref=${shown}`)).json.id).toBe(newest);
    expect((await resolveRef('batches', 'ref=latest')).json.id).toBe(newest);
    expect((await resolveRef('batches', 'ref=latest&pluginId=alpha')).json.id).toBe(batchIds[4]);
    expect((await resolveRef('batches', 'ref=latest~2&pluginId=alpha')).json.id).toBe(batchIds[0]);
    expect((await resolveRef('operations', 'ref=latest&projectId=shop')).json.id).toBe(opIds[1]);
    expect((await resolveRef('operations', 'ref=latest~1&pluginId=alpha')).json.id).toBe(opIds[0]);
  });

  it('refuses a prefix that names several (400, listing them); too short, not hex or matching none: 404', async () => {
    // A second batch id sharing the first batch's first 8 hex digits.
    const twin = `batch_${hex(batchIds[0]!).slice(0, 8)}-0000-4000-8000-000000000000`;
    await redis.zadd(keys.batches, 1, twin);
    try {
      const ambiguous = expectProblem(
        await resolveRef('batches', `ref=${hex(batchIds[0]!).slice(0, 8)}`),
        400,
      );
      expect(ambiguous.detail).toContain(batchIds[0]!);
      expect(ambiguous.detail).toContain(twin);
      expect(ambiguous.detail).toMatch(/names 2 batches/);
    } finally {
      await redis.zrem(keys.batches, twin);
    }
    expect(expectProblem(await resolveRef('batches', 'ref=abc'), 404).detail).toMatch(
      /at least 4 hex digits/,
    );
    expect(expectProblem(await resolveRef('batches', 'ref=shop'), 404).detail).toBe(
      'unknown batch "shop" (batch list shows the known ones)',
    );
    // An id of the kind that names nothing is unknown, as a whole id would be.
    expect(expectProblem(await resolveRef('operations', 'ref=op_nope'), 404).detail).toBe(
      'unknown operation "op_nope" (op list shows the known ones)',
    );
    const unknownHex = hex(batchIds[0]!).startsWith('ffff') ? 'eeeeeeee' : 'ffffffff';
    expect(expectProblem(await resolveRef('operations', `ref=${unknownHex}`), 404).detail).toMatch(
      /no operation id starts with/,
    );
    expect(expectProblem(await resolveRef('batches', 'ref=latest~9&pluginId=beta'), 404).detail).toMatch(
      /no batch is latest~9 of plugin beta/,
    );
  });
});

describe('the CLI takes references, locally and remotely', () => {
  for (const remote of [false, true]) {
    const mode = remote ? 'remote' : 'local';
    it(`${mode}: batch show <prefix>, op show latest --project, batch diff <plugin> latest`, async () => {
      const shown = await cliRun(['batch', 'show', hex(batchIds[1]!).slice(0, 8)], remote);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout).batchId).toBe(batchIds[1]);

      const op = await cliRun(['op', 'show', 'latest', '--project', 'blog'], remote);
      expect(op.code, op.stderr).toBe(0);
      expect(JSON.parse(op.stdout).id).toBe(opIds[3]);

      // alpha's newest (index 4, version 1.4) against the alpha batch before it (index 2, 1.2).
      const diff = await cliRun(['batch', 'diff', 'alpha', 'latest'], remote);
      expect(diff.code, diff.stderr).toBe(0);
      expect(JSON.parse(diff.stdout)).toMatchObject({ from: batchIds[2], to: batchIds[4] });
      const explicit = await cliRun(['batch', 'diff', 'alpha', 'latest~2', 'latest'], remote);
      expect(JSON.parse(explicit.stdout)).toMatchObject({ from: batchIds[0], to: batchIds[4] });
      const previous = await cliRun(['batch', 'diff', '--previous', hex(batchIds[5]!).slice(0, 8)], remote);
      expect(previous.code, previous.stderr).toBe(0);
      expect(JSON.parse(previous.stdout)).toMatchObject({ from: batchIds[3], to: batchIds[5] });
      const oldest = await cliRun(['batch', 'diff', 'beta', 'latest~2'], remote);
      expect(oldest.code).toBe(2);
      expect(oldest.stderr).toMatch(/oldest kept batch/);

      const twin = `op_${hex(opIds[0]!).slice(0, 8)}-0000-4000-8000-000000000000`;
      await redis.zadd(keys.operationsByTime, 1, twin);
      try {
        const ambiguous = await cliRun(['op', 'show', hex(opIds[0]!).slice(0, 8)], remote);
        expect(ambiguous.code).toBe(2);
        expect(ambiguous.stderr).toContain(opIds[0]!);
        expect(ambiguous.stderr).toContain(twin);
      } finally {
        await redis.zrem(keys.operationsByTime, twin);
      }
    });
  }
});
