// The batch page in Debian's Chromium while a batch runs: per-project
// rows and a failure count appear before the batch ends, the bar shows the
// failures, and Cancel and Retry (failed) work from the page. Real worker and
// api processes; the queue-plugin fixture (some projects fail at once, the
// rest take 1.5 s each).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  ACTOR,
  PLUGIN_ID,
  createInstallation,
  startWorker,
  waitFor,
  type Installation,
} from '../support/workers.js';

const FAILING = ['p000', 'p001', 'p002', 'p003', 'p004'];
const TOTAL = 40;

describe('batch page in Chromium', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-batch');
    for (let index = 0; index < TOTAL; index += 1) {
      const id = `p${String(index).padStart(3, '0')}`;
      const root = await installation.addProject(id);
      if (FAILING.includes(id)) await writeFile(join(root, 'inspect-error'), '');
      else await writeFile(join(root, 'inspect-sleep-ms'), '6000'); // long enough to still run on a loaded machine
    }
    await startWorker(installation, { concurrency: 2 });
    ui = await openSignedIn(installation);
    ({ base, page } = ui);
  }, 120_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  it('a running batch shows per-project rows and its failures before it ends; Cancel and Retry (failed) work', async () => {
    const { runtime } = installation!;
    const ids = Array.from({ length: TOTAL }, (_, index) => `p${String(index).padStart(3, '0')}`);
    const batch = await runtime.batches.create(PLUGIN_ID, ids, ACTOR);
    await page.goto(`${base}/#/batches/${batch.batchId}`);

    // Rows and the failure count while it runs, from the live stream (pending projects have rows
    // from the start: wait for the failing ones' rows to say failed).
    await page.waitForFunction(
      (failing) => {
        const rows = [...globalThis.document.querySelectorAll('[data-testid="batch-results"] tbody tr')];
        const failed = rows
          .filter((row) => row.textContent?.includes('failed'))
          .map((row) => row.textContent);
        return failing.every((id: string) => failed.some((text) => text?.includes(id)));
      },
      FAILING,
      { timeout: 30_000 },
    );
    expect(await page.getByTestId('batch-state').innerText()).toContain('running');
    expect(await page.getByTestId('batch-failures').innerText()).toContain('5 failed');
    expect(
      await page.getByTestId('bar-failed').evaluate((el) => parseFloat((el as HTMLElement).style.width)),
    ).toBeGreaterThan(0);
    expect(await page.getByTestId('batch-results').innerText()).not.toContain('Nothing yet');
    expect((await runtime.batches.get(batch.batchId)).state).toBe('running');
    await page.screenshot({ path: join(SHOTS, 'batch-running-with-failures.png'), fullPage: true });

    // Cancel from the page.
    await page.getByTestId('batch-cancel').click();
    await page.waitForFunction(() =>
      globalThis.document.querySelector('[data-testid="batch-state"]')?.textContent?.includes('cancelled'),
    );
    const cancelled = await runtime.batches.get(batch.batchId);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.cancelledBy).toBe('token:initial-admin');
    expect(await page.getByTestId('batch-cancel').isHidden()).toBe(true);
    // "so far" only while the batch runs.
    expect(await page.getByTestId('batch-failures').innerText()).toBe(`${cancelled.failed} failed`);
    await page.screenshot({ path: join(SHOTS, 'batch-cancelled.png'), fullPage: true });

    // Retry the failed and cancelled ones from the page: a new batch over exactly those.
    await page.getByTestId('batch-retry').click();
    await page.waitForFunction((old) => !globalThis.location.hash.includes(old), batch.batchId);
    const retryId = decodeURIComponent(page.url().split('#/batches/')[1]!);
    const retry = await waitFor('the retry batch', async () =>
      runtime.batches.store.get(retryId, { results: false }),
    );
    expect(retry.retryOf).toBe(batch.batchId);
    expect(retry.total).toBe(cancelled.failed + cancelled.cancelled);
    await page.waitForFunction(
      (total) =>
        globalThis.document
          .querySelector('[data-testid="batch-progress-label"]')
          ?.textContent?.includes(`of ${total} projects`),
      retry.total,
    );
    await runtime.batches.cancel(retryId, ACTOR);
  }, 120_000);

  it('an unknown batch id shows only the 404: no Loading… card, no empty cards', async () => {
    await page.goto(`${base}/#/batches/nonexistent`);
    await page.getByTestId('view-error').waitFor();
    expect(await page.getByTestId('view-error').innerText()).toMatch(/not found|no batch|404/i);
    const main = page.locator('#main');
    expect(await main.innerText()).not.toContain('Loading');
    expect(await main.locator('section.card').count()).toBe(0);
    expect(await page.getByTestId('batch-progress-card').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'batch-unknown.png'), fullPage: true });
  });
});
