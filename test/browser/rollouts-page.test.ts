// The rollout pages of the web UI in Debian's Chromium, against a real api,
// worker, Redis and the queue fixture plugin: from a plugin's Fleet page,
// "Act on these" opens the create form with the page's filter as the
// selection; the rollout (risk low) waits for approval; its creator and a
// viewer see no Approve button, a second admin does, with the action's risk,
// the plugin's grants and the OS boundary, and approves it; its waves and
// projects (failures first, each linked to its operation) follow it to the
// end; Retry failed and Export work; another rollout is paused, resumed and
// cancelled with its running operation. At 1280 and 390 px wide.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/core/access/index.js';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import {
  ACTOR,
  PLUGIN_ID,
  createInstallation,
  startWorker,
  untilBatchFinished,
  type Installation,
} from '../support/workers.js';

/** svc-0 … svc-5; below Go 1.21: svc-0, svc-1, svc-3, svc-4 (the Fleet filter's four). */
const VERSIONS = ['1.19', '1.20', '1.22'];
const PROJECTS = Array.from({ length: 6 }, (_, index) => `svc-${index}`);
const SELECTED = ['svc-0', 'svc-1', 'svc-3', 'svc-4'];
/** Its operation answers status "failed": the rollout ends failed, the row comes first. */
const FAILING = 'svc-1';
const NAME = 'go upgrade: below 1.21';
const LABEL = 'go-team';
/** Markup in the input: shown as text, never parsed. */
const MARKUP = '<img src=x data-injected=1>';

describe('rollouts in the web UI', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;
  let base = '';
  let secondAdmin = '';
  let viewer = '';
  let upgradeId = '';
  let slowId = '';

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-rollouts');
    const { runtime } = installation;
    for (const [index, project] of PROJECTS.entries()) {
      const root = await installation.addProject(project);
      await writeFile(
        join(root, 'facts.json'),
        JSON.stringify({ 'go.version': VERSIONS[index % VERSIONS.length] }),
      );
      if (project === FAILING) await writeFile(join(root, 'operate-fail'), '');
    }
    // The Fleet page's label: on five projects, four of them below Go 1.21.
    for (const project of [...SELECTED, 'svc-2']) await runtime.projects.addLabels(project, [LABEL], ACTOR);
    await startWorker(installation, { concurrency: 2 });
    const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 60_000, results: false });
    ui = await openSignedIn(installation);
    ({ base, page } = ui);
    // After the api's first start: it writes its first admin token only while there is none.
    const tokens = new TokenStore(runtime.redis, runtime.keys);
    secondAdmin = (await tokens.create('second-admin', 'admin', ACTOR)).token;
    viewer = (await tokens.create('a-viewer', 'viewer', ACTOR)).token;
  }, 180_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  /** Signs out and in again with `token`, on the plugins page. */
  const signInAs = async (token: string) => {
    await page.getByTestId('sign-out').click();
    await page.goto(`${base}/#/plugins`);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('plugins-table').waitFor();
  };
  const rolloutState = () => page.getByTestId('rollout-state').getAttribute('data-state');
  const untilState = (state: string, timeout = 60_000) =>
    page.waitForFunction(
      (wanted) =>
        globalThis.document.querySelector('[data-testid="rollout-state"]')?.getAttribute('data-state') ===
        wanted,
      state,
      { timeout },
    );
  const rolloutIdOfPage = () => /#\/rollouts\/([^/?]+)$/.exec(page.url())?.[1] ?? '';
  /** Every input, select, textarea and progress on the page has a <label>. */
  const unlabelled = () =>
    page.evaluate(() =>
      [...globalThis.document.querySelectorAll('main input, main select, main textarea, main progress')]
        .filter((el) => ((el as unknown as { labels: unknown[] }).labels ?? []).length === 0)
        .map((el) => el.outerHTML),
    );
  const confirmWith = async (testid: string) => {
    await page.getByTestId(testid).click();
    await page.getByTestId('rollout-confirm').waitFor();
    await page.getByTestId('rollout-confirm-yes').click();
  };

  it('"Act on these" on the Fleet page opens the form with its filter; the rollout waits for approval', async () => {
    await page.goto(`${base}/#/plugins/${PLUGIN_ID}/fleet`);
    const untilRange = (text: string) =>
      page.waitForFunction(
        (wanted) => globalThis.document.querySelector('[data-testid="fleet-range"]')?.textContent === wanted,
        text,
      );
    await page.getByTestId('fleet-label').selectOption(LABEL);
    await untilRange('Rows 1–5 of 5');
    await page.getByTestId('fleet-where').fill('go.version<1.21');
    await page.getByTestId('fleet-where-add').click();
    await untilRange('Rows 1–4 of 4');
    await page.getByTestId('fleet-act').click();
    await page.getByTestId('rollout-form').waitFor();
    expect(page.url()).toContain(`#/rollouts/new?plugin=${PLUGIN_ID}&where=go.version%3C1.21&label=${LABEL}`);
    expect(await page.getByTestId('rollout-where').inputValue()).toBe('go.version<1.21');
    expect(await page.getByTestId('rollout-labels').inputValue()).toBe(LABEL);
    expect(await page.getByTestId('rollout-plugin').inputValue()).toBe(PLUGIN_ID);
    // The actions the plugin's projects advertised, with their risk.
    await page
      .locator('[data-testid="rollout-action"] option[value="append"]')
      .waitFor({ state: 'attached' });
    expect(await page.getByTestId('rollout-action').inputValue()).toBe('append');
    expect(await page.getByTestId('rollout-action-note').innerText()).toContain('Risk: low');
    expect(await unlabelled()).toEqual([]);

    // Input that is not an object is refused before anything is sent.
    await page.getByTestId('rollout-input').fill('[1, 2]');
    await page.getByTestId('rollout-create').click();
    expect(await page.getByTestId('rollout-input-error').innerText()).toContain('JSON object');
    await page.getByTestId('rollout-input').fill(JSON.stringify({ append: 'upgraded', note: MARKUP }));
    // What the api refuses: its problem's detail is shown, nothing is created.
    const refused = async () => {
      await page.getByTestId('rollout-create').click();
      await page.getByTestId('rollout-create-confirm-yes').click();
      await page.getByTestId('rollout-form-error').waitFor();
      return page.getByTestId('rollout-form-error').innerText();
    };
    await page.getByTestId('rollout-name').fill('<b>go</b>');
    expect(await refused()).toMatch(/^400 Bad Request: --name must be/);
    await page.getByTestId('rollout-name').fill(NAME);
    await page.getByTestId('rollout-waves').fill('soon');
    expect(await refused()).toMatch(/^400 Bad Request: .*wave/is);
    await page.getByTestId('rollout-waves').fill('1,100%');
    await page.getByTestId('rollout-max-failures').fill('2');
    await page.getByTestId('rollout-create').click();
    expect(await page.getByTestId('rollout-create-confirm-text').innerText()).toContain(
      'risk as advertised: low',
    );
    await page.screenshot({ path: join(SHOTS, 'rollout-create-1280.png'), fullPage: true });
    await page.getByTestId('rollout-create-confirm-yes').click();

    await page.getByTestId('rollout-summary').waitFor();
    upgradeId = rolloutIdOfPage();
    expect(upgradeId).not.toBe('');
    expect(await rolloutState()).toBe('awaiting-approval');
    expect(await page.getByTestId('rollout-name').innerText()).toBe(NAME);
    // The input is text: its markup is shown, not made into elements.
    expect(await page.getByTestId('rollout-input-shown').innerText()).toContain(MARKUP);
    expect(await page.locator('[data-injected]').count()).toBe(0);
    expect(await page.getByTestId('rollout-total').innerText()).toBe('4 projects to run.');
    expect(await page.getByTestId('rollout-selection').innerText()).toContain(LABEL);
    expect(await page.getByTestId('rollout-waves').locator('progress').count()).toBe(2);
    expect(await page.getByTestId('rollout-wave-1').innerText()).toContain('0 of 1 project ended');
    expect(await page.getByTestId('rollout-wave-2').innerText()).toContain('0 of 3 projects ended');
    // Its creator (the first admin) may not approve it.
    expect(await page.getByTestId('rollout-approve').isHidden()).toBe(true);
    expect(await page.getByTestId('rollout-approve-who').innerText()).toContain('another admin approves it');
    const projectIds = async () =>
      (await page.locator('[data-testid="rollout-projects-table"] tbody tr').allInnerTexts())
        .map((row) => row.split(/\s/)[0])
        .sort();
    await expect.poll(projectIds).toEqual(SELECTED);
    expect(await unlabelled()).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'rollout-awaiting-1280.png'), fullPage: true });

    // A second one from the Rollouts page, for pause, resume and cancel: slow, one at a time.
    await page.locator('#nav').getByRole('link', { name: 'Rollouts' }).click();
    await page.getByTestId(`rollout-row-${upgradeId}`).waitFor();
    await page.getByTestId('rollout-new').click();
    await page
      .locator('[data-testid="rollout-action"] option[value="append"]')
      .waitFor({ state: 'attached' });
    await page.getByTestId('rollout-all').check();
    await page.getByTestId('rollout-input').fill('{"append": "slow", "sleepMs": 60000}');
    await page.getByTestId('rollout-waves').fill('1,100%');
    await page.getByTestId('rollout-concurrency').fill('1');
    await page.getByTestId('rollout-create').click();
    await page.getByTestId('rollout-create-confirm-yes').click();
    await page.getByTestId('rollout-summary').waitFor();
    slowId = rolloutIdOfPage();
    expect(await rolloutState()).toBe('awaiting-approval');
    expect(await page.getByTestId('rollout-total').innerText()).toBe('6 projects to run.');
    expect(ui!.problems).toEqual([]);
  }, 90_000);

  it('a viewer reads rollouts but sees no Approve, Pause or Cancel', async () => {
    await signInAs(viewer);
    await page.locator('#nav').getByRole('link', { name: 'Rollouts' }).click();
    await page.getByTestId(`rollout-row-${slowId}`).waitFor();
    expect(await page.getByTestId('rollout-new').count()).toBe(0);
    expect(await page.getByTestId(`rollout-row-${upgradeId}`).innerText()).toContain(NAME);
    await page.getByTestId('rollouts-state').selectOption('running');
    await page.locator('[data-testid="rollouts-table"] td.empty').waitFor();
    await page.getByTestId('rollouts-state').selectOption('awaiting-approval');
    await page.getByTestId(`rollout-row-${upgradeId}`).waitFor();
    await page.getByTestId(`rollout-link-${upgradeId}`).click();
    await page.getByTestId('rollout-summary').waitFor();
    expect(await page.getByTestId('rollout-approve-who').innerText()).toContain('needs the admin role');
    for (const button of ['rollout-approve', 'rollout-pause', 'rollout-cancel'])
      expect(await page.getByTestId(button).isHidden(), button).toBe(true);
    expect(await page.getByTestId('rollout-export-csv').isVisible()).toBe(true);
  }, 60_000);

  it('a second admin approves it at 390 px: waves and projects follow it, failures first, linked to operations', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signInAs(secondAdmin);
    await page.goto(`${base}/#/rollouts/${upgradeId}`);
    await page.getByTestId('rollout-approve').waitFor();
    expect(await page.getByTestId('rollout-approve-risk').innerText()).toContain(
      'run append (risk: low) on 4 projects',
    );
    expect(await page.getByTestId('rollout-approve-risk').innerText()).toContain('project.operate');
    expect(await page.getByTestId('rollout-approve-boundary').innerText()).toContain('not a full OS sandbox');
    await confirmWith('rollout-approve');
    // One failure of four, within the budget of 2: it runs to the end and ends failed.
    await untilState('failed');
    expect(await page.getByTestId('rollout-approved-by').innerText()).toBe('token:second-admin');
    expect(await page.getByTestId('rollout-counts').innerText()).toBe('4 of 4 ended — 3 succeeded, 1 failed');
    for (const wave of [1, 2])
      expect(await page.getByTestId(`rollout-wave-${wave}`).getAttribute('data-state')).toBe('done');
    expect(await page.getByTestId('rollout-wave-2').innerText()).toContain('3 of 3 projects ended');
    const rows = page.locator('[data-testid="rollout-projects-table"] tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    expect(await rows.first().innerText()).toContain(FAILING);
    expect(await rows.first().innerText()).toContain('failed');
    for (const project of SELECTED) await page.getByTestId(`rollout-op-${project}`).waitFor();
    expect(await page.evaluate(() => globalThis.document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await page.screenshot({ path: join(SHOTS, 'rollout-failed-390.png'), fullPage: true });

    // Export: every project, one JSON line each.
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('rollout-export-jsonl').click(),
    ]);
    expect(file.suggestedFilename()).toBe(`rollout-${upgradeId}.jsonl`);
    const lines = (await readFile((await file.path())!, 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).projectId).sort()).toEqual(SELECTED);

    // The failed project's operation page.
    const failedOp = await page.getByTestId(`rollout-op-${FAILING}`).getAttribute('href');
    await page.getByTestId(`rollout-op-${FAILING}`).click();
    await page.getByTestId('op-card').waitFor();
    expect(page.url()).toContain(failedOp!);
    expect(await page.getByTestId('op-project').innerText()).toBe(FAILING);
    await page.goBack();

    // Retry failed: a new rollout of the one failed project, waiting for its own approval.
    await page.getByTestId('rollout-retry').waitFor();
    await confirmWith('rollout-retry');
    await page.waitForFunction((first) => !globalThis.location.hash.endsWith(first), upgradeId);
    await page.getByTestId('rollout-retry-of').waitFor();
    expect(await page.getByTestId('rollout-total').innerText()).toBe('1 project to run.');
    expect(await rolloutState()).toBe('awaiting-approval');
    expect(ui!.problems).toEqual([]);
  }, 120_000);

  it('pauses, resumes and cancels a running rollout at 1280 px; its running operation is cancelled', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/#/rollouts/${slowId}`);
    await confirmWith('rollout-approve');
    await untilState('running');
    // The first wave's one project runs (60 s of sleep).
    const first = page.locator('[data-testid="rollout-projects-table"] tbody tr').first();
    await expect.poll(() => first.innerText(), { timeout: 30_000 }).toMatch(/running/);
    const operationId = (await first.locator('a[href^="#/operations/"]').getAttribute('href'))!
      .split('/')
      .pop()!;

    await confirmWith('rollout-pause');
    await untilState('paused');
    expect(await page.getByTestId('rollout-paused-reason').isVisible()).toBe(true);
    expect(await page.getByTestId('rollout-resume').isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'rollout-paused-1280.png'), fullPage: true });
    await confirmWith('rollout-resume');
    await untilState('running');

    await confirmWith('rollout-cancel');
    await untilState('cancelled');
    expect(await page.getByTestId('rollout-cancelled-by').innerText()).toBe('token:second-admin');
    for (const button of ['rollout-approve', 'rollout-pause', 'rollout-resume', 'rollout-cancel'])
      expect(await page.getByTestId(button).isHidden(), button).toBe(true);
    const operations = installation!.runtime.operations;
    const ended = await waitFor(
      'the running operation to be cancelled',
      async () => {
        const op = await operations.get(operationId);
        return ['cancelled', 'failed', 'succeeded'].includes(op.state) ? op : undefined;
      },
      30_000,
    );
    expect(ended.state).toBe('cancelled');
    // Nothing else started: the other five never got an operation.
    await page.reload();
    await untilState('cancelled');
    await expect.poll(() => page.locator('[data-testid^="rollout-op-"]').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'rollout-cancelled-1280.png'), fullPage: true });
    expect(ui!.problems).toEqual([]);
  }, 120_000);
  it('a preview action from the form: each project shows its preview, linked to its operation', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Rollouts' }).click();
    await page.getByTestId('rollout-new').click();
    await page
      .locator('[data-testid="rollout-action"] option[value="append"]')
      .waitFor({ state: 'attached' });
    await page.getByTestId('rollout-projects').fill(SELECTED.join(' '));
    await page.getByTestId('rollout-input').fill('{"append": "previewed"}');
    await page.getByTestId('rollout-preview-action').fill('preview');
    await page.getByTestId('rollout-create').click();
    await page.getByTestId('rollout-create-confirm-yes').click();
    await page.getByTestId('rollout-summary').waitFor();
    // Every preview ends, then it waits for a person whatever the action's risk.
    await untilState('awaiting-approval');
    const first = page.getByTestId(`rollout-preview-${SELECTED[0]}`);
    await first.waitFor();
    expect(await first.innerText()).toMatch(/^Preview succeeded: would append 1 line to /);
    expect(await first.locator('a').getAttribute('href')).toMatch(/^#\/operations\/op_/);
    expect(await page.locator('[data-testid^="rollout-preview-"]').count()).toBe(SELECTED.length);
    await confirmWith('rollout-cancel');
    await untilState('cancelled');
    expect(await unlabelled()).toEqual([]);
    expect(ui!.problems).toEqual([]);
  }, 90_000);
});
