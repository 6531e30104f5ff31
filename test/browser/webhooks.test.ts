// The Webhooks page in Chromium: an admin sees each webhook (never its
// secret) and each delivery with its state and last answer, and removes a
// webhook; at 1280 and 390 px an admin adds one from the form, edits it
// (URL, events, inactive, a new secret with the old one's window), pings it,
// opens the delivery (its body and the receiver's answer) and redelivers it,
// the receiver verifying every signature, and nothing of the page is wider
// than the window; a viewer gets the admin-only notice and no list.
import { createHmac } from 'node:crypto';
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
const FORM_SECRET = 'browser-form-secret-3a9c';
const ROTATED_SECRET = 'browser-rotated-secret-6f2b';

interface Received {
  path: string;
  delivery: string;
  /** Which of the page's secrets signed it (X-Switchyard-Signature-256, then -Previous). */
  signedWith: string[];
}
const received: Received[] = [];
const hmac = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

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
  let receiverBase = '';

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
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const sent = [
          request.headers['x-switchyard-signature-256'],
          request.headers['x-switchyard-signature-256-previous'],
        ];
        received.push({
          path: request.url ?? '',
          delivery: String(request.headers['x-switchyard-delivery']),
          signedWith: sent.flatMap((signature) =>
            [SECRET, FORM_SECRET, ROTATED_SECRET].filter((secret) => signature === hmac(secret, raw)),
          ),
        });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"thanks":"browser receiver"}');
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const secretFile = join(made.dataDir, 'hook.secret');
    await writeFile(secretFile, SECRET);
    receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const url = `${receiverBase}/hook`;
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

  for (const width of [1280, 390]) {
    it(`at ${width} px an admin adds, edits, pings, opens and redelivers a webhook; nothing is wider than the window`, async () => {
      const page = await browser!.newPage({ viewport: { width, height: 900 } });
      page.setDefaultTimeout(20_000);
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));
      await page.goto(`${base}/`);
      await page.getByTestId('token-input').fill(adminToken);
      await page.getByTestId('sign-in').click();
      await page.locator('#nav').waitFor();
      await page.goto(`${base}/#/webhooks`);
      const fits = async (step: string) => {
        const { overflow, widest } = await page.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - window.innerWidth,
          // What sticks out, to name in the failure.
          widest: [...document.querySelectorAll('body *')]
            .filter((el) => el.getBoundingClientRect().right > window.innerWidth)
            .slice(-5)
            .map(
              (el) =>
                `${el.tagName.toLowerCase()}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`,
            ),
        }));
        expect(
          overflow,
          `${step} at ${width} px is wider than the window: ${widest.join(', ')}`,
        ).toBeLessThanOrEqual(0);
      };
      await page.getByTestId('webhook-url').waitFor();
      await fits('the page');

      // Add: the URL, two events, the secret.
      await page.getByTestId('webhook-url').fill(`${receiverBase}/added-${width}`);
      await page.getByTestId('webhook-add-event-operation.finished').check();
      await page.getByTestId('webhook-secret').fill(FORM_SECRET);
      await page.getByTestId('webhook-add').click();
      const flash = page.getByText(/^Added webhook wh_[0-9a-f]{12}\.$/);
      await flash.waitFor();
      const id = /wh_[0-9a-f]{12}/.exec((await flash.textContent())!)![0];
      const added = (await runtime!.webhooks.list()).find((hook) => hook.id === id)!;
      expect(added).toMatchObject({
        url: `${receiverBase}/added-${width}`,
        events: ['batch.finished', 'operation.finished'],
        active: true,
      });
      expect(await page.content()).not.toContain(FORM_SECRET);
      await fits('after adding');

      // Edit: a new URL, one event, inactive, a new secret with the old one valid for an hour.
      await page.getByTestId(`webhook-edit-${id}`).click();
      await page.getByTestId('webhook-edit-url').fill(`${receiverBase}/edited-${width}`);
      await page.getByTestId('webhook-edit-event-batch.finished').uncheck();
      await page.getByTestId('webhook-edit-active').uncheck();
      await page.getByTestId('webhook-edit-secret').fill(ROTATED_SECRET);
      await page.getByTestId('webhook-edit-window').selectOption({ label: '1 hour' });
      await fits('the edit form');
      await page.getByTestId('webhook-save').click();
      await page.getByText(`Saved webhook ${id} and its new secret.`).waitFor();
      const edited = (await runtime!.webhooks.list()).find((hook) => hook.id === id)!;
      expect(edited).toMatchObject({
        url: `${receiverBase}/edited-${width}`,
        events: ['operation.finished'],
        active: false,
      });
      const validFor = Date.parse(edited.previousSecretUntil!) - Date.now();
      expect(validFor).toBeGreaterThan(50 * 60_000);
      expect(validFor).toBeLessThanOrEqual(3_600_000);
      expect(await page.getByTestId(`webhook-state-${id}`).textContent()).toContain('inactive');

      // Ping: delivered to the new URL, signed by the new secret and the old one.
      await page.getByTestId(`webhook-ping-${id}`).click();
      const pinged = page.getByText(/^Ping queued as delivery [0-9a-f]{16}-wh_[0-9a-f]{12}\.$/);
      await pinged.waitFor();
      const deliveryId = /[0-9a-f]{16}-wh_[0-9a-f]{12}/.exec((await pinged.textContent())!)![0];
      await waitFor('the ping delivered', async () =>
        received.find((entry) => entry.delivery === deliveryId),
      );
      expect(received.find((entry) => entry.delivery === deliveryId)).toEqual({
        path: `/edited-${width}`,
        delivery: deliveryId,
        signedWith: [ROTATED_SECRET, FORM_SECRET],
      });
      await waitFor(
        'the ping recorded',
        async () => (await runtime!.webhooks.delivery(deliveryId)).state === 'delivered',
      );
      await page.reload();
      await page.getByTestId(`delivery-state-${deliveryId}`).waitFor();
      expect(await page.getByTestId(`delivery-state-${deliveryId}`).textContent()).toContain('delivered');
      expect(await page.getByTestId('deliveries-table').textContent()).toContain('browser receiver');

      // Open it: the body as sent and the receiver's answer.
      await page.getByTestId(`delivery-show-${deliveryId}`).click();
      const detail = page.getByTestId('delivery-detail');
      await detail.waitFor();
      expect(await page.getByTestId('delivery-body').textContent()).toContain(
        `"deliveryId": "${deliveryId}"`,
      );
      expect(await page.getByTestId('delivery-answer-1').textContent()).toContain(
        '{"thanks":"browser receiver"}',
      );
      expect(await detail.textContent()).toMatch(/HTTP 200 in \d+ ms/);
      await fits('a delivery opened');
      await page.screenshot({ path: join(SHOTS, `webhooks-${width}.png`), fullPage: true });

      // Redeliver it: a new delivery of the same ping.
      await page.getByTestId(`delivery-redeliver-${deliveryId}`).click();
      const again = page.getByText(/^Redelivery queued as delivery [0-9a-f]{16}-wh_[0-9a-f]{12}\.$/);
      await again.waitFor();
      const againId = /[0-9a-f]{16}-wh_[0-9a-f]{12}/.exec((await again.textContent())!)![0];
      await waitFor('the redelivery', async () => received.find((entry) => entry.delivery === againId));
      await fits('after the redelivery');
      expect(failures).toEqual([]);
      await page.close();
    }, 120_000);
  }

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
