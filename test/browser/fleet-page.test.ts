// A plugin's Fleet page over 1,000 projects in Debian's Chromium: the bar
// chart of a fact's values (uPlot, served by the api from node_modules,
// under the strict CSP) with its counts beside it, the projects × facts
// table filtered as `facts --where` filters and sorted on the server, and
// the trend of the plugin's batches. The projects are registered by a scan;
// their inspections are recorded through the core's batch store (the
// workers' record script), which keeps the fleet's facts.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { failedWith, inspected, seedBatch } from '../support/seed-batches.js';
import { ACTOR, PLUGIN_ID, createInstallation, type Installation } from '../support/workers.js';

const FLEET = 1_000;
const VERSIONS = ['1.19', '1.20.4', '1.21', '1.9'];
const versionOf = (index: number) => VERSIONS[index % VERSIONS.length]!;
const name = (index: number) => `svc-${String(index).padStart(4, '0')}`;
const NAMES = Array.from({ length: FLEET }, (_, index) => name(index));
const facts = (index: number) => ({
  'go.version': versionOf(index),
  'ci.system': index < 600 ? 'gha' : 'jenkins',
});

describe('fleet page in Chromium', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;
  let base: string;
  let cspViolations: string[] = [];

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-fleet');
    const { runtime, projectsDir } = installation;
    for (const project of NAMES) await mkdir(join(projectsDir, project));
    const scan = await runtime.projects.scan(projectsDir, { trust: true }, ACTOR);
    expect(scan.registered).toHaveLength(FLEET);
    // Two batches: every project, then the same with 7 failures (every 100th from 3): the trend.
    await seedBatch(runtime, PLUGIN_ID, NAMES, (id, index) => inspected(id, facts(index)));
    await seedBatch(runtime, PLUGIN_ID, NAMES, (id, index) =>
      index % 100 === 3 && index < 700 ? failedWith(id, 'go.mod unreadable') : inspected(id, facts(index)),
    );
    ui = await openSignedIn(installation);
    ({ base, page } = ui);
    cspViolations = ui.problems;
  }, 180_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  const cells = (fact: string) =>
    page.locator(`[data-testid="fleet-rows"] tbody td[data-fact="${fact}"]`).allInnerTexts();
  const untilRange = (text: string) =>
    page.waitForFunction(
      (expected) =>
        globalThis.document.querySelector('[data-testid="fleet-range"]')?.textContent === expected,
      text,
    );

  it('reaches the fleet from the nav and the plugin page; charts a fact with its counts', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Fleet' }).click();
    await page.getByTestId(`fleet-link-${PLUGIN_ID}`).click();
    await page.getByTestId('fleet-counts-table').waitFor();
    expect(page.url()).toContain(`#/plugins/${PLUGIN_ID}/fleet`);
    expect(await page.locator('#nav a[aria-current="page"]').innerText()).toBe('Fleet');
    // The plugin page links here too.
    await page.goto(`${base}/#/plugins/${PLUGIN_ID}`);
    await page.getByTestId('plugin-fleet-link').click();
    await page.getByTestId('fleet-counts-table').waitFor();

    // The first fact (ci.system): a canvas with two bars, the numbers beside it.
    expect(await page.getByTestId('fleet-fact').inputValue()).toBe('ci.system');
    await page.locator('[data-testid="fleet-chart"] canvas').waitFor();
    expect(await page.getByTestId('fleet-chart').getAttribute('data-bars')).toBe('2');
    expect(await countRows(page)).toEqual([
      ['gha', '600'],
      ['jenkins', '400'],
    ]);
    // go.version: four bars; the latest successful result counts (a failed one keeps the last good facts).
    await page.getByTestId('fleet-fact').selectOption('go.version');
    await page.waitForFunction(
      () =>
        globalThis.document.querySelector('[data-testid="fleet-chart"]')?.getAttribute('data-bars') === '4',
    );
    expect(await page.locator('[data-testid="fleet-chart"] canvas').count()).toBeGreaterThan(0);
    expect(await countRows(page)).toEqual(
      VERSIONS.slice()
        .sort()
        .map((version) => [version, '250']),
    );
    // The trend: two batches, the second with 7 new failures.
    expect(await page.getByTestId('trend-chart').getAttribute('data-points')).toBe('2');
    expect(await page.locator('[data-testid="trend-chart"] canvas').count()).toBeGreaterThan(0);
    const trend = await page.locator('[data-testid="trend-table"] tbody tr').allInnerTexts();
    expect(trend).toHaveLength(2);
    expect(trend[0]!.split('\t').slice(-3)).toEqual(['993', '7', '7']);
    await untilRange('Rows 1–100 of 1,000');
    await page.screenshot({ path: join(SHOTS, 'fleet-1000.png'), fullPage: true });
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('filters the table by a version (version-aware), by a value from the counts, and sorts on the server', async () => {
    // A filter the api refuses is dropped, with the api's reason.
    await page.getByTestId('fleet-where').fill('go.version~(');
    await page.getByTestId('fleet-where-add').click();
    await page.getByTestId('fleet-error').waitFor();
    expect(await page.getByTestId('fleet-error').innerText()).toContain('400');
    expect(await page.getByTestId('fleet-filters').innerText()).toBe('');
    await page.getByTestId('fleet-where').fill('go.version<1.20');
    await page.getByTestId('fleet-where-add').click();
    // 1.19 and 1.9: below 1.20 as versions (as text "1.9" > "1.20").
    await untilRange('Rows 1–100 of 500');
    expect(new Set(await cells('go.version'))).toEqual(new Set(['1.19', '1.9']));
    expect(await countRows(page)).toEqual([
      ['1.19', '250'],
      ['1.9', '250'],
    ]);
    const firstPage = await page
      .locator('[data-testid="fleet-rows"] tbody tr td:first-child')
      .allInnerTexts();
    expect(firstPage[0]).toBe(name(0));
    await page.getByTestId('fleet-next').click();
    await untilRange('Rows 101–200 of 500');
    const secondPage = await page
      .locator('[data-testid="fleet-rows"] tbody tr td:first-child')
      .allInnerTexts();
    expect(secondPage[0]).toBe(name(200)); // every other project is below 1.20: the 101st is svc-0200
    await page.getByTestId('fleet-prev').click();
    await untilRange('Rows 1–100 of 500');

    // "only these" on a value adds NAME=VALUE.
    await page.getByTestId('fleet-only-1.9').click();
    await untilRange('Rows 1–100 of 250');
    expect(new Set(await cells('go.version'))).toEqual(new Set(['1.9']));
    expect(await page.getByTestId('fleet-filters').innerText()).toContain('go.version=1.9');

    // Remove both filters; sort by go.version, descending: 1.21 first (1.21 > 1.20.4 > 1.19 > 1.9).
    await page.getByTestId('fleet-filter-1').click();
    await page.getByTestId('fleet-filter-0').click();
    await untilRange('Rows 1–100 of 1,000');
    await page.getByTestId('fleet-sort-go.version').click();
    await page.waitForFunction(
      () =>
        globalThis.document.querySelector('[data-testid="fleet-rows"] td[data-fact="go.version"]')
          ?.textContent === '1.9',
    );
    await page.getByTestId('fleet-sort-go.version').click();
    await page.waitForFunction(
      () =>
        globalThis.document.querySelector('[data-testid="fleet-rows"] td[data-fact="go.version"]')
          ?.textContent === '1.21',
    );
    expect(new Set(await cells('go.version'))).toEqual(new Set(['1.21']));
    // Page 3 of the descending sort: the rest of 1.21 then 1.20.4, across the sorted cursor.
    await page.getByTestId('fleet-next').click();
    await page.getByTestId('fleet-next').click();
    await untilRange('Rows 201–300 of 1,000');
    const third = await cells('go.version');
    expect(third.slice(0, 50).every((value) => value === '1.21')).toBe(true);
    expect(third.slice(50).every((value) => value === '1.20.4')).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'fleet-sorted.png') });
  }, 60_000);
});

/** The counts table beside the chart: [value, projects] per row. */
async function countRows(page: Page): Promise<string[][]> {
  const rows = await page
    .locator('[data-testid="fleet-counts-table"] tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent ?? '')),
    );
  return rows.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
