// Idempotency keys bind their request: the same key with the same request is
// the same operation; the same key with another plugin, project, action or
// input is refused — HTTP 409 and CLI exit 2, naming the operation that holds
// the key — and nothing new is enqueued.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from '../support/data-dir.js';
import {
  ALL_SCOPES,
  PLUGIN_ID,
  call,
  expectProblem,
  globalArgs,
  runCli,
  setUpApi,
  type Api,
  type ApiSetup,
  type Installation,
} from './support.js';

interface Operation {
  id: string;
  projectId: string;
  action: string;
}

let setup: ApiSetup | undefined;
let installation: Installation;
let api: Api;
let token = '';

beforeAll(async () => {
  setup = await setUpApi('api-idempotency', async (root) => {
    await makeProject(join(root, 'projects'), 'shop');
    await makeProject(join(root, 'projects'), 'blog');
  });
  ({ installation, api } = setup);
  token = api.adminToken;
  const cli = (args: string[]) => runCli([...globalArgs(installation), ...args]);
  for (const args of [
    ['plugin', 'refresh'],
    ['project', 'scan', join(setup.root, 'projects'), '--trust'],
  ]) {
    const { code, output } = await cli(args);
    expect(code, output).toBe(0);
  }
  const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, { token });
  for (const [path, body] of [
    [`/api/v1/plugins/${PLUGIN_ID}/trust`, { fingerprint: shown.json.fingerprint }],
    [`/api/v1/plugins/${PLUGIN_ID}/enable`, { scopes: ALL_SCOPES }],
  ] as const) {
    const answer = await call(api, 'POST', path, { token, body });
    expect(answer.status, answer.text).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

const request = (input: unknown, projectId = 'shop', action = 'fixture.echo') => ({
  pluginId: PLUGIN_ID,
  projectId,
  action,
  input,
});

async function listed(): Promise<string[]> {
  const answer = await call<{ items: Operation[] }>(api, 'GET', '/api/v1/operations?limit=100', { token });
  return answer.json.items.map((operation) => operation.id);
}

describe('idempotency key bound to its request', () => {
  it('HTTP: same key and request → same operation (inputs compared as canonical JSON); other request → 409 naming it', async () => {
    const key = `http-${Date.now()}`;
    const post = (body: unknown) =>
      call<Operation>(api, 'POST', '/api/v1/operations', {
        token,
        body,
        headers: { 'idempotency-key': key },
      });
    const first = await post(request({ amount: 1, note: 'a' }));
    expect(first.status, first.text).toBe(202);
    const again = await post(request({ note: 'a', amount: 1 }));
    expect(again.status, again.text).toBe(200);
    expect(again.json.id).toBe(first.json.id);

    for (const other of [
      request({ amount: 5, note: 'a' }),
      request({ amount: 1, note: 'a' }, 'blog'),
      request({ amount: 1, note: 'a' }, 'shop', 'fixture.other'),
    ]) {
      const refused = await post(other);
      const problem = expectProblem(refused, 409);
      expect(problem.detail).toContain(first.json.id);
      expect(problem.detail).toContain(key);
    }
    expect((await listed()).filter((id) => id === first.json.id)).toHaveLength(1);
    expect(await listed()).toHaveLength(1);
  });

  it('CLI: `run` with a used key and other input exits 2 naming the operation; the same input prints it again', async () => {
    const key = `cli-${Date.now()}`;
    const run = (input: string) =>
      runCli([
        ...globalArgs(installation),
        '--json',
        'run',
        PLUGIN_ID,
        'shop',
        'fixture.echo',
        '--yes',
        '--idempotency-key',
        key,
        '--input',
        input,
      ]);
    const first = await run('{"amount":1}');
    expect(first.code, first.output).toBe(0);
    const id = (JSON.parse(first.output) as Operation).id;
    const same = await run('{"amount":1}');
    expect(same.code, same.output).toBe(0);
    expect((JSON.parse(same.output) as Operation).id).toBe(id);
    const other = await run('{"amount":5}');
    expect(other.code, other.output).toBe(2);
    expect(other.output).toContain(`error: idempotency key "${key}" is held by operation ${id}`);
  });
});
