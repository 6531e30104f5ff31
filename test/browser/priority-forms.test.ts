// The priority fields of the web UI in Debian's Chromium (docs/CLI.md "Fair share",
// ADR 0010 "Priority"), against a real api process: an admin starts a batch
// and adds a schedule with priority high from the forms, and the API then
// reports both with `high`. An operator is not offered `high`; a form that
// sends it anyway (an option put back into the select, as a stale page or a
// person's DevTools would) gets the API's refusal (403, the admin role
// named) shown on the page, and nothing is created.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { createInstallation, type Installation } from '../support/workers.js';

describe('priority in the web UI (Chromium)', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let adminToken: string;

  /** The API as a client: the answer's status and body. */
  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${ui!.base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> & unknown[] };
  };

  /** A second page of the same browser, signed in with `token`. */
  const signIn = async (token: string): Promise<Page> => {
    const page = await (await ui!.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${ui!.base}/`);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('plugins-table').waitFor();
    return page;
  };

  /** Offers `high` in a select the page rendered without it (what the server must still refuse). */
  const forceHigh = (page: Page, testid: string) =>
    page.getByTestId(testid).evaluate((select) => {
      const option = document.createElement('option');
      option.value = 'high';
      option.textContent = 'high';
      select.append(option);
      (select as HTMLSelectElement).value = 'high';
    });

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-priority');
    await installation.addProject('alpha');
    await installation.addProject('beta');
    ui = await openSignedIn(installation);
    adminToken = (await readFile(join(installation.dataDir, 'api-token'), 'utf8')).trim();
  }, 120_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  it('an admin sets priority high on a batch and a schedule; the API reports it', async () => {
    const { page } = ui!;
    await page.goto(`${ui!.base}/#/batches`);
    await page.getByLabel('Priority in the queue').selectOption('high');
    await page.getByTestId('batch-start').click();
    await page.waitForURL(/#\/batches\/[^/]+$/);
    const batchId = decodeURIComponent(new URL(page.url()).hash.replace('#/batches/', ''));
    const batch = await api(adminToken, 'GET', `/batches/${encodeURIComponent(batchId)}`);
    expect(batch.status).toBe(200);
    expect(batch.body.priority).toBe('high');

    await page.goto(`${ui!.base}/#/schedules`);
    await page.getByTestId('schedule-cron').fill('0 3 * * *');
    await page.getByLabel('Priority in the queue').selectOption('high');
    await page.getByTestId('schedule-add').click();
    await expect
      .poll(async () => ((await api(adminToken, 'GET', '/schedules')).body as unknown[]).length)
      .toBe(1);
    const [schedule] = (await api(adminToken, 'GET', '/schedules')).body as { priority?: string }[];
    expect(schedule?.priority).toBe('high');
    expect(ui!.failures).toEqual([]);
    expect(ui!.problems).toEqual([]);
  }, 120_000);

  it('an operator is not offered high, and a form sending it shows the API refusal', async () => {
    const created = await api(adminToken, 'POST', '/tokens', { name: 'ops-person', role: 'operator' });
    expect(created.status).toBe(201);
    const page = await signIn(created.body.token as string);
    try {
      const batchesBefore = (
        (await api(adminToken, 'GET', '/batches')).body as unknown as { items: unknown[] }
      ).items.length;
      await page.goto(`${ui!.base}/#/batches`);
      const batchPriority = page.getByTestId('batch-priority');
      await batchPriority.waitFor();
      expect(await batchPriority.locator('option').allTextContents()).not.toContainEqual(
        expect.stringContaining('high'),
      );
      await forceHigh(page, 'batch-priority');
      await page.getByTestId('batch-start').click();
      const batchError = page.getByTestId('batch-start-error');
      await batchError.waitFor();
      expect(await batchError.innerText()).toMatch(/403[\s\S]*priority high needs the admin role/);
      expect(page.url()).toMatch(/#\/batches$/);
      const batchesAfter = (
        (await api(adminToken, 'GET', '/batches')).body as unknown as { items: unknown[] }
      ).items.length;
      expect(batchesAfter).toBe(batchesBefore);

      await page.goto(`${ui!.base}/#/schedules`);
      const schedulePriority = page.getByTestId('schedule-priority');
      await schedulePriority.waitFor();
      expect(await schedulePriority.locator('option').allTextContents()).not.toContainEqual(
        expect.stringContaining('high'),
      );
      await page.getByTestId('schedule-cron').fill('0 4 * * *');
      await forceHigh(page, 'schedule-priority');
      await page.getByTestId('schedule-add').click();
      const scheduleError = page.getByTestId('schedule-add-error');
      await scheduleError.waitFor();
      expect(await scheduleError.innerText()).toMatch(/403[\s\S]*priority high needs the admin role/);
      expect(((await api(adminToken, 'GET', '/schedules')).body as unknown[]).length).toBe(1);
    } finally {
      await page.context().close();
    }
  }, 120_000);
});
