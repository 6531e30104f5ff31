// The admin pages of the web UI in Debian's Chromium, against a real api
// process (test/support/browser.ts) over an installation whose plugin is
// trusted and enabled: a token is created and its secret shown once, a cron
// schedule is added and removed, and an interval schedule reads as the CLI
// writes it. Nothing on the page fails: no console error, no refused request.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { createInstallation, type Installation } from '../support/workers.js';

describe('admin pages in Chromium', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-admin');
    await installation.addProject('alpha');
    ui = await openSignedIn(installation, { width: 1280, height: 800 });
    ({ page } = ui);
  }, 120_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  it('admin pages: creates a token (secret shown once) and adds and removes a schedule', async () => {
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByTestId('tokens-table').waitFor();
    await page.getByTestId('token-name').fill('ui-person');
    await page.getByTestId('token-role').selectOption('viewer');
    await page.getByTestId('token-expires').selectOption({ label: '30 days' });
    await page.getByTestId('token-create').click();
    const secret = await page.getByTestId('token-secret').innerText();
    expect(secret).toMatch(/^sy_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    await page.screenshot({ path: join(SHOTS, '15a-token-created.png') });
    // Listed with its expiry once the page is shown again, and the secret is gone.
    await page.reload();
    const row = page.locator('[data-testid="tokens-table"] tr', { hasText: 'ui-person' });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/viewer/);
    expect(await row.innerText()).not.toMatch(/never\s+never/);
    expect(await page.getByTestId('token-secret').count()).toBe(0);

    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByTestId('schedules-table').waitFor();
    await page.getByTestId('schedule-cron').fill('0 3 * * *');
    await page.getByTestId('schedule-add').click();
    await page.getByTestId('flash').waitFor();
    const scheduled = page.locator('[data-testid="schedules-table"] tr', { hasText: '0 3 * * *' });
    await scheduled.waitFor();
    await page.screenshot({ path: join(SHOTS, '15b-schedules.png') });
    await scheduled.getByRole('button', { name: 'Remove' }).click();
    // The page is drawn again without the row (the add's flash is still there until then).
    await scheduled.waitFor({ state: 'detached' });
    expect(await page.getByTestId('flash').innerText()).toMatch(/Removed schedule sched_/);
  });

  it('shows an interval schedule the way the CLI does (every 1h, not every 3600 s)', async () => {
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByTestId('schedules-table').waitFor();
    await page.getByTestId('schedule-every').selectOption({ label: '1 hour' });
    await page.getByTestId('schedule-add').click();
    const scheduled = page.locator('[data-testid="schedules-table"] tr', { hasText: /every/ });
    await scheduled.waitFor();
    const text = await scheduled.innerText();
    expect(text).toMatch(/every 1h\b/);
    expect(text).not.toMatch(/3600/);
    await scheduled.getByRole('button', { name: 'Remove' }).click();
    await scheduled.waitFor({ state: 'detached' });
  });

  it('nothing failed on the page: no console error, uncaught error or refused request', () => {
    expect(ui!.failures).toEqual([]);
  });
});
