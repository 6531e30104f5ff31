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
import { call, setUpApi, startWorker, waitFor, type ApiSetup } from './support.js';

const LEAKY_ID = 'leaky-plugin';
const SCOPES = ['project.metadata.read'];

let setup: ApiSetup | undefined;

beforeAll(async () => {
  setup = await setUpApi('api-redaction', async (root, dataDir) => {
    const packageDir = join(dataDir, 'plugins', LEAKY_ID);
    await mkdir(packageDir, { recursive: true });
    await copyFile(join(REPO, 'test', 'fixtures', 'leaky-plugin.mjs'), join(packageDir, 'leaky-plugin.mjs'));
    await chmod(join(packageDir, 'leaky-plugin.mjs'), 0o755);
    const manifest = {
      schemaVersion: 'switchyard.plugin-manifest/v1',
      id: LEAKY_ID,
      name: 'Leaky plugin',
      version: '1.0.0',
      protocolVersion: 'switchyard.plugin/v1',
      executable: 'leaky-plugin.mjs',
      arguments: [],
      capabilities: ['project.inspect'],
      requestedScopes: SCOPES,
    };
    await writeFile(join(packageDir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await mkdir(join(root, 'projects', 'victim'), { recursive: true });
  });
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

describe('a plugin prints the admin token to stderr', () => {
  it('a viewer reads [REDACTED] in the plugin logs, never the token, and nothing in them opens admin routes', async () => {
    const { api, installation, root } = setup!;
    const admin = api.adminToken;
    const as = (token: string) => ({ token });

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
    expect(lines.some((line) => line.startsWith('stolen admin token: [REDACTED]'))).toBe(true);
    expect(lines.filter((line) => line.includes('[REDACTED]')).length).toBeGreaterThanOrEqual(4);
    const secret = admin.slice(admin.lastIndexOf('_') + 1);
    expect(logs.text).not.toContain(admin);
    expect(logs.text).not.toContain(secret.slice(0, 12));

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
