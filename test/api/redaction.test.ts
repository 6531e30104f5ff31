// The viewer attack (secrets reaching the logs): a plugin that prints the
// admin API token to stderr must not let a viewer read it from
// GET /api/v1/plugins/<id>/logs and use it. Real api, real worker, real plugin
// process; the token is checked in the api answer and in what Redis stored.
import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/keys.js';
import { REPO } from '../support/data-dir.js';
import { call, readEvents, setUpApi, startWorker, waitFor, type ApiSetup } from './support.js';

const LEAKY_ID = 'leaky-plugin';
const SCOPES = ['project.metadata.read'];
/** The same plugin, also allowed to operate: it returns the token in everything it answers. */
const RESULTS_ID = 'leaky-results';
const RESULTS_SCOPES = ['project.metadata.read', 'project.operate'];

async function installLeaky(dataDir: string, id: string, capabilities: string[], scopes: string[]) {
  const packageDir = join(dataDir, 'plugins', id);
  await mkdir(packageDir, { recursive: true });
  await copyFile(join(REPO, 'test', 'fixtures', 'leaky-plugin.mjs'), join(packageDir, 'leaky-plugin.mjs'));
  await chmod(join(packageDir, 'leaky-plugin.mjs'), 0o755);
  const manifest = {
    schemaVersion: 'switchyard.plugin-manifest/v1',
    id,
    name: 'Leaky plugin',
    version: '1.0.0',
    protocolVersion: 'switchyard.plugin/v1',
    executable: 'leaky-plugin.mjs',
    arguments: [],
    capabilities,
    requestedScopes: scopes,
  };
  await writeFile(join(packageDir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

let setup: ApiSetup | undefined;

beforeAll(async () => {
  setup = await setUpApi('api-redaction', async (root, dataDir) => {
    await installLeaky(dataDir, LEAKY_ID, ['project.inspect'], SCOPES);
    await installLeaky(dataDir, RESULTS_ID, ['project.inspect', 'project.operate'], RESULTS_SCOPES);
    await mkdir(join(root, 'projects', 'victim'), { recursive: true });
  });
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

/** Hands the leaky plugins the admin token: the secret a hostile plugin got hold of somehow. */
async function plantToken(): Promise<void> {
  const { api, installation } = setup!;
  for (const id of [LEAKY_ID, RESULTS_ID])
    await writeFile(join(installation.dataDir, 'plugins', id, 'stolen-token'), `${api.adminToken}\n`);
}

describe('a plugin prints the admin token to stderr', () => {
  it('a viewer reads [REDACTED] in the plugin logs, never the token, and nothing in them opens admin routes', async () => {
    const { api, installation, root } = setup!;
    const admin = api.adminToken;
    const as = (token: string) => ({ token });
    await plantToken();

    // The admin reviews, trusts and enables the plugin, adds a project, runs a batch.
    expect((await call(api, 'POST', '/api/v1/plugins/refresh', { ...as(admin), body: {} })).status).toBe(200);
    const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${LEAKY_ID}`, as(admin));
    const trust = { ...as(admin), body: { fingerprint: shown.json.fingerprint } };
    expect((await call(api, 'POST', `/api/v1/plugins/${LEAKY_ID}/trust`, trust)).status).toBe(200);
    const enable = { ...as(admin), body: { scopes: SCOPES } };
    expect((await call(api, 'POST', `/api/v1/plugins/${LEAKY_ID}/enable`, enable)).status).toBe(200);
    const project = await call<{ id: string }>(api, 'POST', '/api/v1/projects', {
      ...as(admin),
      body: { path: join(root, 'projects', 'victim'), trust: true },
    });
    expect(project.status, project.text).toBe(201);
    await startWorker(installation);
    const batch = await call<{ batchId: string }>(api, 'POST', '/api/v1/batches', {
      ...as(admin),
      body: { pluginId: LEAKY_ID, projects: [project.json.id] },
    });
    expect(batch.status, batch.text).toBe(202);
    await waitFor('the batch to finish', async () => {
      const view = await call<{ state: string }>(
        api,
        'GET',
        `/api/v1/batches/${batch.json.batchId}`,
        as(admin),
      );
      return view.json.state !== 'running';
    });

    // A viewer reads the logs.
    const viewer = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      ...as(admin),
      body: { name: 'curious-viewer', role: 'viewer' },
    });
    expect(viewer.status).toBe(201);
    const logs = await call<{ line: string }[]>(
      api,
      'GET',
      `/api/v1/plugins/${LEAKY_ID}/logs`,
      as(viewer.json.token),
    );
    expect(logs.status, logs.text).toBe(200);
    const lines = logs.json.map((entry) => entry.line);
    expect(logs.text, 'the plugin had the token to leak').not.toContain('no-token-file');
    expect(lines.some((line) => line.startsWith('stolen admin token: [REDACTED]'))).toBe(true);
    expect(lines.filter((line) => line.includes('[REDACTED]')).length).toBeGreaterThanOrEqual(4);
    const secret = admin.slice(admin.lastIndexOf('_') + 1);
    expect(logs.text).not.toContain(admin);
    expect(logs.text).not.toContain(secret.slice(0, 12));
    // Nor put together by a reader whose browser draws the invisible characters as nothing.
    expect(logs.text.replace(/\p{Default_Ignorable_Code_Point}/gu, '')).not.toContain(secret.slice(-12));
    for (const form of ['variation selector', 'tag character', 'hangul filler'])
      expect(lines, form).toContain(`${form}: [REDACTED]`);

    // Whatever looks like a token in what the viewer read opens nothing.
    for (const candidate of logs.text.match(/sy_[A-Za-z0-9_-]+/g) ?? []) {
      expect((await call(api, 'GET', '/api/v1/tokens', as(candidate))).status).toBe(401);
    }

    // Stored redacted, not only answered redacted: the worker never knew the token's value.
    const redis = new Redis(installation.redisUrl);
    try {
      const stored = await redis.lrange(keysFor(installation.prefix).pluginLogs(LEAKY_ID), 0, -1);
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.join('\n')).not.toContain(secret.slice(0, 12));
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});

describe('a plugin returns the admin token in everything it answers', () => {
  it('a viewer reads no secret from stderr, facts, warnings, actions, errors or output, by any route, export or stream', async () => {
    const { api, installation } = setup!;
    const admin = api.adminToken;
    const secret = admin.slice(admin.lastIndexOf('_') + 1);
    const as = (token: string) => ({ token });
    await plantToken();
    const post = async <T>(path: string, body: unknown, status: number) => {
      const answer = await call<T>(api, 'POST', path, { ...as(admin), body });
      expect(answer.status, answer.text).toBe(status);
      return answer.json;
    };

    await post('/api/v1/plugins/refresh', {}, 200);
    const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${RESULTS_ID}`, as(admin));
    await post(`/api/v1/plugins/${RESULTS_ID}/trust`, { fingerprint: shown.json.fingerprint }, 200);
    await post(`/api/v1/plugins/${RESULTS_ID}/enable`, { scopes: RESULTS_SCOPES }, 200);
    const projects = await call<{ id: string }[]>(api, 'GET', '/api/v1/projects', as(admin));
    const projectId = projects.json[0]!.id;
    await startWorker(installation);
    const viewer = (
      await post<{ token: string }>('/api/v1/tokens', { name: 'viewer-2', role: 'viewer' }, 201)
    ).token;

    const batch = await post<{ batchId: string }>(
      '/api/v1/batches',
      { pluginId: RESULTS_ID, projects: [projectId] },
      202,
    );
    const batchEvents = readEvents(
      api,
      `/api/v1/batches/${batch.batchId}/events`,
      viewer,
      60_000,
      (event) => event.event === 'done',
    );
    const leak = await post<{ id: string }>(
      '/api/v1/operations',
      { pluginId: RESULTS_ID, projectId, action: 'leak' },
      202,
    );
    const operationEvents = readEvents(
      api,
      `/api/v1/operations/${leak.id}/events`,
      viewer,
      60_000,
      (event) => event.event === 'done',
    );
    const failing = await post<{ id: string }>(
      '/api/v1/operations',
      { pluginId: RESULTS_ID, projectId, action: 'fail' },
      202,
    );
    for (const path of [
      `/api/v1/batches/${batch.batchId}`,
      `/api/v1/operations/${leak.id}`,
      `/api/v1/operations/${failing.id}`,
    ]) {
      await waitFor(
        `${path} to end`,
        async () => {
          const view = await call<{ state: string }>(api, 'GET', path, as(admin));
          return !['running', 'queued'].includes(view.json.state);
        },
        60_000,
      );
    }

    const read: Record<string, string> = {};
    for (const path of [
      `/api/v1/batches/${batch.batchId}`,
      '/api/v1/batches',
      `/api/v1/batches/${batch.batchId}/export?format=jsonl`,
      `/api/v1/batches/${batch.batchId}/export?format=csv`,
      `/api/v1/batches/${batch.batchId}/previous`,
      `/api/v1/operations/${leak.id}`,
      `/api/v1/operations/${failing.id}`,
      '/api/v1/operations',
      `/api/v1/operations/${leak.id}/logs`,
      `/api/v1/operations/${failing.id}/logs`,
      `/api/v1/plugins/${RESULTS_ID}`,
      `/api/v1/plugins/${RESULTS_ID}/logs`,
      '/api/v1/plugins',
      '/api/v1/audit?limit=500',
    ]) {
      const answer = await call(api, 'GET', path, as(viewer));
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
      read[path] = answer.text;
    }
    read['batch events'] = JSON.stringify((await batchEvents).events);
    read['operation events'] = JSON.stringify((await operationEvents).events);
    expect(read['batch events']).toContain('"done"');
    expect(read['operation events']).toContain('"done"');

    const leaked = Object.entries(read)
      .filter(([, text]) => text.includes(secret.slice(0, 12)) || text.includes('hunter2-plain'))
      .map(([route]) => route);
    expect(leaked).toEqual([]);

    // The results say they were redacted, and keep what was not a secret.
    const view = JSON.parse(read[`/api/v1/batches/${batch.batchId}`]!) as {
      results: { result: { redacted?: boolean; facts: { id: string; value: string }[]; summary: string } }[];
    };
    const result = view.results[0]!.result;
    expect(result.redacted).toBe(true);
    expect(result.summary).toMatch(/^inspected .* with \[REDACTED\]$/);
    expect(result.facts.find((fact) => fact.id === 'node')?.value).toBe('22');
    expect(result.facts.find((fact) => fact.id === 'db.password')?.value).toBe('[REDACTED]');
    const operation = JSON.parse(read[`/api/v1/operations/${leak.id}`]!) as {
      state: string;
      result: { redacted?: boolean; summary: string };
    };
    expect(operation).toMatchObject({
      state: 'succeeded',
      result: { redacted: true, summary: 'used [REDACTED]' },
    });
    expect(JSON.parse(read[`/api/v1/operations/${failing.id}`]!)).toMatchObject({
      state: 'failed',
      errorMessage: expect.stringContaining('could not use [REDACTED]') as unknown,
    });
    expect(read[`/api/v1/batches/${batch.batchId}/export?format=csv`]!.split('\n')[1]).toMatch(/,true$/);

    // Stored redacted: nothing anywhere in Redis holds the token.
    const redis = new Redis(installation.redisUrl);
    try {
      const holding: string[] = [];
      for (const key of await redis.keys('*')) {
        const type = await redis.type(key);
        const value =
          type === 'string'
            ? await redis.get(key)
            : type === 'hash'
              ? JSON.stringify(await redis.hgetall(key))
              : type === 'list'
                ? JSON.stringify(await redis.lrange(key, 0, -1))
                : type === 'set'
                  ? JSON.stringify(await redis.smembers(key))
                  : type === 'zset'
                    ? JSON.stringify(await redis.zrange(key, 0, -1))
                    : type === 'stream'
                      ? JSON.stringify(await redis.xrange(key, '-', '+'))
                      : '';
        if (value?.includes(secret.slice(0, 12))) holding.push(key);
      }
      expect(holding).toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 120_000);
});

describe('a rejected package never shows a viewer the secrets in its manifest', () => {
  it('GET /api/v1/plugins/:id and GET /api/v1/plugins: every piece quoted from it redacted and cut to 120 characters', async () => {
    const { api, installation } = setup!;
    const admin = api.adminToken;
    const body = 'aZ3kQ9xW2mP7'.repeat(4);
    const openAiKey = `sk-proj-${body}`;
    const awsKeyId = `${'AKIA'}IOSFODNN7EXAMPLE`;
    const githubToken = `ghp_${'Qw3rTy7uIo9p'.repeat(3)}`;
    const long = (char: string) => char.repeat(300);
    const put = async (id: string, manifest: Record<string, unknown>, files: Record<string, number> = {}) => {
      const dir = join(installation.dataDir, 'plugins', id);
      await mkdir(dir, { recursive: true });
      for (const [name, mode] of Object.entries(files)) {
        await writeFile(join(dir, name), '#!/bin/sh\n');
        await chmod(join(dir, name), mode);
      }
      await writeFile(join(dir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    };
    const identity = {
      schemaVersion: 'switchyard.plugin-manifest/v1',
      capabilities: ['project.inspect'],
      requestedScopes: ['project.metadata.read'],
    };
    // Rejected by validation: a secret in a field's value, a wrong protocolVersion, unknown field names.
    await put('rejected-manifest', {
      ...identity,
      id: 'rejected-manifest',
      name: `${long('n')} ${githubToken}`,
      version: 'db_password=hunter9',
      protocolVersion: openAiKey,
      executable: 'run',
      [`extra_${awsKeyId}`]: 1,
      [long('u')]: 2,
    });
    // A valid manifest whose executable check fails: the error quotes the executable.
    await put('missing-executable', {
      ...identity,
      id: 'missing-executable',
      name: 'DB_PASSWORD=hunter9-name',
      version: 'token=hunter9-version',
      protocolVersion: 'switchyard.plugin/v1',
      executable: `bin/${openAiKey}/${long('e')}`,
      arguments: ['--password=hunter9-argument', long('a')],
    });
    await put(
      'writable-executable',
      {
        ...identity,
        id: 'writable-executable',
        name: `${githubToken} plugin`,
        version: '1.0.0',
        protocolVersion: 'switchyard.plugin/v1',
        executable: `run-${awsKeyId}.sh`,
      },
      { [`run-${awsKeyId}.sh`]: 0o777 },
    );

    const refreshed = await call(api, 'POST', '/api/v1/plugins/refresh', { token: admin, body: {} });
    expect(refreshed.status, refreshed.text).toBe(200);
    const viewer = await call<{ token: string }>(api, 'POST', '/api/v1/tokens', {
      token: admin,
      body: { name: 'manifest-viewer', role: 'viewer' },
    });
    expect(viewer.status, viewer.text).toBe(201);

    const read: Record<string, string> = {};
    for (const path of [
      '/api/v1/plugins',
      '/api/v1/plugins/rejected-manifest',
      '/api/v1/plugins/missing-executable',
      '/api/v1/plugins/writable-executable',
    ]) {
      const answer = await call(api, 'GET', path, { token: viewer.json.token });
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
      read[path] = answer.text;
    }
    const shown = (text: string) =>
      [
        body,
        'IOSFODNN7EXAMPLE',
        githubToken.slice(4),
        'hunter9',
        ...['n', 'u', 'e', 'a'].map((c) => c.repeat(121)),
      ].filter((piece) => text.includes(piece));
    expect(
      Object.entries(read)
        .filter(([, text]) => shown(text).length > 0)
        .map(([path, text]) => `${path}: ${shown(text).join(', ')}`),
    ).toEqual([]);

    // Still reported, with what is not a secret.
    const rejected = JSON.parse(read['/api/v1/plugins/rejected-manifest']!) as Record<string, unknown>;
    expect(rejected).toMatchObject({ available: false, version: 'db_password=[REDACTED]' });
    expect(rejected.error).toMatch(/protocolVersion: the plugin speaks "\[REDACTED\]"/);
    expect(rejected.error).toMatch(/unknown fields "extra_\[REDACTED\]", "u{119}…"/);
    const missing = JSON.parse(read['/api/v1/plugins/missing-executable']!) as Record<string, unknown>;
    expect(missing).toMatchObject({
      available: false,
      name: 'DB_PASSWORD=[REDACTED]',
      version: 'token=[REDACTED]',
    });
    expect(missing.error).toMatch(/^executable: bin\/\[REDACTED\]\/e+… does not exist in the package$/);
    const writable = JSON.parse(read['/api/v1/plugins/writable-executable']!) as Record<string, unknown>;
    expect(writable).toMatchObject({ available: false, name: '[REDACTED] plugin' });
    expect(writable.error).toMatch(/^executable: run-\[REDACTED\]\.sh /);
  }, 60_000);
});
