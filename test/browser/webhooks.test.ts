// The Webhooks page in Chromium: an admin sees each webhook (never its
// secret) and each delivery with its state and last answer, and removes a
// webhook; a viewer gets the admin-only notice and no list.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/core/runtime/index.js';
import {
  completion,
  requireBuiltCli,
  spawnCliProcess,
  terminate,
  untilLogged,
  type CliProcess,
} from '../support/cli-process.js';
import { REPO, makeDataDir, uniquePrefix } from '../support/data-dir.js';
import { freePort, startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-artifacts', 'screenshots');
const SECRET = 'browser-webhook-secret-7d1e';

describe('the Webhooks page in Chromium', () => {
  const procs: CliProcess[] = [];
  let redis: OwnedRedis | undefined;
  let cleanupDir: (() => Promise<void>) | undefined;
  let browser: Browser | undefined;
  let runtime: Runtime | undefined;
  let receiver: Server | undefined;
  let base = '';
  let adminToken = '';
  let globals: string[] = [];
  let hookId = '';

  const cli = async (args: string[]) => {
    const proc = spawnCliProcess([...globals, ...args]);
    const { code } = await completion(proc);
    expect(code, proc.output()).toBe(0);
    return proc.output();
  };
  const signedIn = async (token: string): Promise<Page> => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(20_000);
    await page.goto(`${base}/`);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.locator('#nav').waitFor();
    return page;
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install it (Debian: \`apt-get install -y chromium\`).`,
      );
    requireBuiltCli();
    await mkdir(SHOTS, { recursive: true });
    redis = await startOwnedRedis();
    const made = await makeDataDir();
    cleanupDir = made.cleanup;
    const prefix = uniquePrefix('ui-webhooks');
    globals = ['--data-dir', made.dataDir, '--redis-url', redis.url, '--prefix', prefix];
    receiver = createServer((_request, response) => response.writeHead(200).end());
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const secretFile = join(made.dataDir, 'hook.secret');
    await writeFile(secretFile, SECRET);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const added = await cli([
      '--json',
      'webhook',
      'add',
      '--url',
      url,
      '--events',
      'batch.finished',
      '--secret-file',
      secretFile,
    ]);
    hookId = (JSON.parse(added) as { id: string }).id;
    for (const [role, args, ready] of [
      ['worker', ['worker', '--concurrency', '1'], 'worker-ready'],
      ['api', ['api', '--port', String(await freePort())], 'listening'],
    ] as const) {
      const proc = spawnCliProcess([...globals, ...args]);
      procs.push(proc);
      await untilLogged(proc, role, ready, 30_000);
      if (role === 'api') base = `http://127.0.0.1:${args[2]}`;
    }
    adminToken = (await readFile(join(made.dataDir, 'api-token'), 'utf8')).trim();
    runtime = await createRuntime({ dataDir: made.dataDir, redisUrl: redis.url, prefix });
    await runtime.webhooks.publish('batch.finished', { batch: { batchId: 'b-ui' } }, { key: 'b-ui' });
    await waitFor(
      'the delivery',
      async () => (await runtime!.webhooks.deliveries())[0]?.state === 'delivered',
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    await runtime?.close().catch(() => {});
    for (const proc of procs.reverse()) await terminate(proc, 10_000).catch(() => {});
    receiver?.closeAllConnections();
    receiver?.close();
    await redis?.stop().catch(() => {});
    await cleanupDir?.().catch(() => {});
  }, 60_000);

  it('an admin sees the webhook and its delivery, never the secret, and removes it', async () => {
    const page = await signedIn(adminToken);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const hooks = page.getByTestId('webhooks-table');
    await hooks.waitFor();
    expect(await hooks.textContent()).toContain(hookId);
    expect(await hooks.textContent()).toContain('batch.finished');
    const deliveries = page.getByTestId('deliveries-table');
    expect(await deliveries.textContent()).toMatch(/delivered/);
    expect(await deliveries.textContent()).toMatch(/HTTP 200 in \d+ ms/);
    expect(await page.content()).not.toContain(SECRET);
    await page.screenshot({ path: join(SHOTS, 'webhooks-admin.png'), fullPage: true });
    await page.getByTestId(`webhook-remove-${hookId}`).click();
    await page.getByText(`Removed webhook ${hookId}.`).waitFor();
    expect(await page.getByTestId('webhooks-table').textContent()).not.toContain(hookId);
    await page.close();
  });

  it('a viewer gets the admin-only notice and no list', async () => {
    const made = JSON.parse(
      await cli(['--json', 'token', 'create', '--name', 'ui-viewer', '--role', 'viewer']),
    ) as { token: string };
    const page = await signedIn(made.token);
    expect(await page.getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(false);
    await page.goto(`${base}/#/webhooks`);
    await page.getByTestId('admin-only').waitFor();
    expect(await page.getByTestId('admin-only').textContent()).toMatch(/needs the admin role.*viewer/);
    expect(await page.getByTestId('webhooks-table').count()).toBe(0);
    await page.close();
  });
});
