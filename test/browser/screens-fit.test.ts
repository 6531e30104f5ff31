// Every page of the web UI fits a 390 px phone and a 1280 px screen, in
// Debian's Chromium against a real api, worker and Redis: nothing is wider
// than the window (a wide table scrolls inside itself), the review page keeps a
// reading width (no value wrapped a letter per line) and shows the whole
// fingerprint, the schedules table keeps its Remove button in view at 1280 px,
// the rollout pages (list, create form, one rollout) fit as the others,
// and the operation form finds a project among many by typing.
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
  untilBatchFinished,
  type Installation,
} from '../support/workers.js';

const PROJECTS = 120;
const PAGES = [
  '#/plugins',
  `#/plugins/${PLUGIN_ID}`,
  `#/plugins/${PLUGIN_ID}/fleet`,
  '#/fleet',
  '#/projects',
  '#/batches',
  '#/rollouts',
  '#/rollouts/new',
  '#/operations',
  '#/audit',
  '#/queue',
  '#/schedules',
  '#/tokens',
  '#/webhooks',
];

/** What a page shows once its data is read (its h1 comes before): the route → a selector. */
const READY = new Map<string, string>([
  ['#/rollouts', '[data-testid="rollouts-table"] a'],
  ['#/rollouts/new', '[data-testid="rollout-action"] option[value="append"]'],
]);

/** What overflows the window: the document's width, and each element whose right edge passes it. */
async function overflow(
  page: Page,
): Promise<{ width: number; height: number; wide: string[]; squeezed: string[] }> {
  return page.evaluate(() => {
    const limit = document.documentElement.clientWidth;
    const wide: string[] = [];
    // A value of some length given less than ~10 characters of width reads a letter or two per line.
    const squeezed: string[] = [];
    for (const element of document.querySelectorAll('main dd, main p, main li, main td')) {
      const text = element.textContent?.trim() ?? '';
      const box = element.getBoundingClientRect();
      if (text.length > 30 && box.width > 0 && box.width < 80)
        squeezed.push(`${element.tagName.toLowerCase()} ${Math.round(box.width)} px: ${text.slice(0, 30)}`);
    }
    for (const element of document.querySelectorAll('body *')) {
      const box = element.getBoundingClientRect();
      if (box.width === 0) continue;
      // Inside a table that scrolls by itself, a wide cell is fine.
      const scroller = element.closest('table.data, pre, .log, .scroll-x');
      if (scroller && scroller !== element) continue;
      // Nor past the card it sits in (a table breaking out of its card at 1280 px clipped its buttons).
      const card = element.parentElement?.closest('.card');
      const edge = card ? Math.min(limit, card.getBoundingClientRect().right) : limit;
      if (box.right > edge + 1)
        wide.push(
          `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} right ${Math.round(box.right)}`,
        );
    }
    return {
      width: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
      wide: wide.slice(0, 5),
      squeezed: squeezed.slice(0, 5),
    };
  });
}

describe('the web UI fits the screen', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-fit');
    const ids: string[] = [];
    for (let index = 0; index < PROJECTS; index++)
      await installation.addProject(`service-with-a-long-descriptive-name-${String(index).padStart(3, '0')}`);
    for (const project of await installation.runtime.projects.list()) ids.push(project.id);
    await startWorker(installation, { concurrency: 4 });
    const batch = await installation.runtime.batches.create(PLUGIN_ID, ids, ACTOR);
    await untilBatchFinished(installation.runtime, batch.batchId, { timeoutMs: 90_000, results: false });
    // A rollout waiting for approval (the fixture's action has risk low): its page, in three waves.
    const rollout = await installation.runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        name: 'append a line to every service of the fleet',
        selection: { all: true },
      },
      ACTOR,
    );
    PAGES.push(`#/rollouts/${rollout.id}`);
    READY.set(`#/rollouts/${rollout.id}`, '[data-testid="rollout-projects-table"] a');
    await installation.runtime.schedules.add(
      {
        pluginId: PLUGIN_ID,
        projects: 'all',
        everyMs: 3_600_000,
        name: 'nightly-fleet-inspection-of-everything',
      },
      ACTOR,
    );
    await installation.runtime.webhooks.add(
      {
        url: 'https://hooks.example.invalid/a/very/long/path/for/the/receiver/that/goes/on/and/on',
        events: ['batch.finished', 'operation.finished', 'facts.changed'],
        secret: 'a-secret-of-sixteen-or-more',
      },
      ACTOR,
    );
    ui = await openSignedIn(installation, { width: 390, height: 844 });
    ({ page } = ui);
  }, 240_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  for (const width of [390, 1280])
    it(`no page is wider than a ${width} px window`, async () => {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      const wider: string[] = [];
      for (const route of PAGES) {
        await page.goto(`${ui!.base}/${route}`);
        await page.locator('main h1').first().waitFor();
        const ready = READY.get(route);
        if (ready) await page.locator(ready).first().waitFor({ state: 'attached' });
        await page.waitForLoadState('networkidle');
        const seen = await overflow(page);
        await page.screenshot({ path: join(SHOTS, `fit-${width}-${route.replace(/[^a-z]+/g, '-')}.png`) });
        if (seen.width > width || seen.wide.length > 0)
          wider.push(`${route}: ${seen.width} px wide (${seen.wide.join('; ')})`);
        if (seen.squeezed.length > 0) wider.push(`${route}: squeezed ${seen.squeezed.join('; ')}`);
      }
      expect(wider).toEqual([]);
    });

  it('the operation form narrows its projects as one types', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${ui!.base}/#/operations`);
    const select = page.getByTestId('op-project');
    await select.waitFor();
    expect(await select.locator('option').count()).toBe(PROJECTS);
    await page.getByTestId('op-project-search').fill('name-07');
    await expect.poll(() => select.locator('option').count()).toBe(10);
    expect(await page.getByTestId('op-project-count').innerText()).toBe(`10 of ${PROJECTS} projects match.`);
    // The first match is chosen, so the actions shown are that project's.
    expect(await select.inputValue()).toBe('service-with-a-long-descriptive-name-070');
    await page.getByTestId('op-project-search').fill('');
    await expect.poll(() => select.locator('option').count()).toBe(PROJECTS);
  });
});
