// One project's page in Debian's Chromium: what the project is (root, a
// root gone missing, labels, trust) and its results across the plugin's
// kept batches, newest first, with a fact's value over the batches charted
// (uPlot, under the strict CSP) and tabled. Reached from the projects list,
// a batch's rows and the Fleet table. The batches are recorded through the
// core's batch store (test/support/seed-batches.ts), as the fleet test does.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { failedWith, inspected, seedBatch } from '../support/seed-batches.js';
import { ACTOR, PLUGIN_ID, createInstallation, type Installation } from '../support/workers.js';

const PROJECTS = ['alpha', 'beta', 'gamma'];
/** alpha's go.version and ci.system in each of the three batches, oldest first. */
const ALPHA = [
  { 'go.version': '1.19', 'ci.system': 'gha' },
  { 'go.version': '1.21', 'ci.system': 'gha' },
  { 'go.version': '1.22', 'ci.system': 'jenkins' },
];

describe('project page in Chromium', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;
  let base: string;
  const batches: string[] = [];
  let cspViolations: string[] = [];

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-project');
    const { runtime, projectsDir } = installation;
    for (const project of PROJECTS) await mkdir(join(projectsDir, project));
    const scan = await runtime.projects.scan(projectsDir, { trust: true }, ACTOR);
    expect(scan.registered).toHaveLength(PROJECTS.length);
    await runtime.projects.addLabels('alpha', ['team-a', 'tier-1'], ACTOR);
    await runtime.projects.addLabels('beta', ['team-b'], ACTOR);
    // Three batches: alpha's go.version moves 1.19 → 1.21 → 1.22; beta fails in the second.
    for (const [round, facts] of ALPHA.entries()) {
      batches.push(
        await seedBatch(runtime, PLUGIN_ID, PROJECTS, (id) =>
          id === 'alpha'
            ? inspected(id, facts, round === 2 ? ['go.sum is stale'] : [])
            : id === 'beta' && round === 1
              ? failedWith(id, 'go.mod unreadable')
              : inspected(id, { 'go.version': '1.20', 'ci.system': 'gha' }),
        ),
      );
    }
    // gamma's directory goes away: its page says so.
    await rm(join(projectsDir, 'gamma'), { recursive: true });
    ui = await openSignedIn(installation);
    ({ base, page } = ui);
    cspViolations = ui.problems;
  }, 180_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  const historyRows = () =>
    page
      .locator('[data-testid="project-history-table"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())),
      );
  const untilRange = (text: string) =>
    page.waitForFunction(
      (expected) =>
        globalThis.document.querySelector('[data-testid="fleet-range"]')?.textContent === expected,
      text,
    );
  const fleetProjects = () =>
    page.locator('[data-testid="fleet-rows"] tbody tr td:first-child').allInnerTexts();
  const factValues = () =>
    page.locator('[data-testid="project-fact-values"] tbody tr td:nth-child(3)').allInnerTexts();

  it('reaches a project from the projects list: what it is and its results newest first', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Projects' }).click();
    await page.getByTestId('project-link-alpha').click();
    await page.getByTestId('project-history-table').waitFor();
    expect(page.url()).toContain('#/projects/alpha');
    expect(await page.locator('#nav a[aria-current="page"]').innerText()).toBe('Projects');
    expect(await page.getByTestId('project-id').innerText()).toBe('alpha');
    expect(await page.getByTestId('project-root').innerText()).toBe(join(installation!.projectsDir, 'alpha'));
    expect(await page.getByTestId('project-labels').innerText()).toMatch(/team-a\s*tier-1/);
    expect(await page.getByTestId('project-trust').innerText()).toContain('trusted');
    expect(await page.getByTestId('project-root-missing').count()).toBe(0);
    expect(await page.getByTestId('project-plugin').inputValue()).toBe(PLUGIN_ID);

    // Three batches, newest first: batch link, time, status, summary, warnings.
    const rows = await historyRows();
    expect(rows.map((cells) => cells[0])).toEqual([...batches].reverse());
    expect(rows.every((cells) => cells[2]!.endsWith('succeeded'))).toBe(true);
    expect(rows.every((cells) => cells[3] === '2 facts')).toBe(true);
    expect(rows[0]![4]).toBe('go.sum is stale');
    expect(rows[1]![4]).toBe('');

    // The first fact (ci.system) is text: no chart, each batch's value in the table.
    expect(await page.getByTestId('project-fact').inputValue()).toBe('ci.system');
    expect(await page.getByTestId('project-chart').getAttribute('data-kind')).toBe('text');
    expect(await page.locator('[data-testid="project-chart"] canvas').count()).toBe(0);
    expect(await page.getByTestId('project-chart-note').innerText()).toContain('not plotted');
    expect(await factValues()).toEqual(['gha', 'gha', 'jenkins']);

    // go.version: versions, charted by uPlot over the three batches, oldest first.
    await page.getByTestId('project-fact').selectOption('go.version');
    await page.locator('[data-testid="project-chart"] canvas').waitFor();
    expect(await page.getByTestId('project-chart').getAttribute('data-kind')).toBe('version');
    expect(await page.getByTestId('project-chart').getAttribute('data-points')).toBe('3');
    expect(await factValues()).toEqual(['1.19', '1.21', '1.22']);
    await page.screenshot({ path: join(SHOTS, 'project-page.png'), fullPage: true });
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('shows a failure with its code under Details, and a root gone missing', async () => {
    await page.goto(`${base}/#/projects/beta`);
    await page.getByTestId('project-history-table').waitFor();
    const rows = await historyRows();
    expect(rows).toHaveLength(3);
    expect(rows[1]![2]).toContain('failed');
    const failure = page.locator('[data-testid="project-history-table"] tbody tr').nth(1);
    expect(await failure.getByTestId('row-error').innerText()).toBe('go.mod unreadable');
    expect(await failure.locator('details code').first().textContent()).toBe('PLUGIN_ERROR');
    // The failed batch has no go.version: two values charted, not three.
    await page.getByTestId('project-fact').selectOption('go.version');
    expect(await factValues()).toEqual(['1.20', '1.20']);
    await page.screenshot({ path: join(SHOTS, 'project-page-failure.png'), fullPage: true });

    await page.goto(`${base}/#/projects/gamma`);
    await page.getByTestId('project-root-missing').waitFor();
    expect(await page.getByTestId('project-labels').innerText()).toBe('none');

    await page.goto(`${base}/#/projects/nobody`);
    await page.getByTestId('project-not-found').waitFor();
  }, 60_000);

  it('links: a history row to its batch, a batch row and a Fleet row back to the project', async () => {
    await page.goto(`${base}/#/projects/alpha`);
    await page.getByTestId(`history-batch-${batches[2]}`).click();
    await page.getByTestId('row-project-alpha').waitFor();
    expect(page.url()).toContain(`#/batches/${batches[2]}`);
    await page.getByTestId('row-project-alpha').click();
    await page.getByTestId('project-history-table').waitFor();
    expect(page.url()).toContain('#/projects/alpha');

    await page.getByTestId('project-fleet-link').click();
    await untilRange('Rows 1–3 of 3');
    await page.getByTestId('fleet-project-beta').click();
    await page.getByTestId('project-history-table').waitFor();
    expect(page.url()).toContain('#/projects/beta');
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it("filters the Fleet page to a label's projects (the api's label, as `facts --label`)", async () => {
    await page.goto(`${base}/#/plugins/${PLUGIN_ID}/fleet`);
    await untilRange('Rows 1–3 of 3');
    const labelOptions = await page.locator('[data-testid="fleet-label"] option').allInnerTexts();
    expect(labelOptions).toEqual(['any', 'team-a', 'team-b', 'tier-1']);
    await page.getByTestId('fleet-label').selectOption('team-a');
    await untilRange('Rows 1–1 of 1');
    expect(await fleetProjects()).toEqual(['alpha']);
    // The counts follow the label too: alpha's latest go.version.
    await page.getByTestId('fleet-fact').selectOption('go.version');
    await page.waitForFunction(
      () =>
        globalThis.document.querySelector('[data-testid="fleet-counts-table"] tbody td')?.textContent ===
        '1.22',
    );
    // With a --where filter as well: both apply.
    await page.getByTestId('fleet-label').selectOption('team-b');
    await page.getByTestId('fleet-project-beta').waitFor();
    await untilRange('Rows 1–1 of 1');
    expect(await fleetProjects()).toEqual(['beta']);
    await page.getByTestId('fleet-where').fill('go.version>1.20');
    await page.getByTestId('fleet-where-add').click();
    await untilRange('No rows');
    await page.getByTestId('fleet-label').selectOption('');
    await untilRange('Rows 1–1 of 1');
    expect(await fleetProjects()).toEqual(['alpha']);
    await page.screenshot({ path: join(SHOTS, 'fleet-label.png') });
    expect(cspViolations).toEqual([]);
  }, 60_000);
});
