// The review web UI in a real browser (Debian's Chromium driven by
// playwright-core) against a real installation: an owned Redis, a worker, the
// scheduler and the api process, all spawned from dist/cli/main.js. A reviewer
// signs in with the api's first admin token, finds the fingerprint and the OS
// trust boundary without scrolling, trusts and enables the plugin, runs a
// batch and operations (one cancelled while queued), and reads the audit.
// Screenshots of each step go to test-artifacts/screenshots/.
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { collectFailures, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OS_TRUST_BOUNDARY_STATEMENT } from '../../sdk/src/constants.js';
import {
  completion,
  requireBuiltCli,
  spawnCliProcess,
  terminate,
  untilLogged,
  type CliProcess,
} from '../support/cli-process.js';
import {
  FIXTURE_INSPECTOR_DIST,
  REPO,
  installPackage,
  makeDataDir,
  makeProject,
  uniquePrefix,
} from '../support/data-dir.js';
import { freePort, startOwnedRedis, type OwnedRedis } from '../support/redis.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-artifacts', 'screenshots');
const VIEWPORT = { width: 1280, height: 800 };
const PLUGIN = 'fixture-inspector';

interface Proc extends CliProcess {
  role: string;
}

const procs: Proc[] = [];

async function launch(role: string, globals: string[], args: string[], readyEvent: string): Promise<Proc> {
  const proc: Proc = Object.assign(spawnCliProcess([...globals, ...args]), { role });
  procs.push(proc);
  await untilLogged(proc, role, readyEvent, 30_000);
  return proc;
}

function stop(proc: Proc): Promise<void> {
  return terminate(proc, 10_000);
}

async function runCli(globals: string[], args: string[]): Promise<{ code: number | null; out: string }> {
  const proc = spawnCliProcess([...globals, '--json', ...args]);
  const { code } = await completion(proc);
  return { code, out: proc.output() };
}

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

/** The element's box lies inside the first viewport, with the page not scrolled. */
async function inFirstViewport(
  page: Page,
  testid: string,
): Promise<{ x: number; y: number; w: number; h: number }> {
  const box = await page.getByTestId(testid).boundingBox();
  expect(box, `${testid} has a box`).not.toBeNull();
  const { x, y, width, height } = box!;
  expect(await page.evaluate(() => [globalThis.scrollX, globalThis.scrollY])).toEqual([0, 0]);
  expect(x, `${testid} left`).toBeGreaterThanOrEqual(0);
  expect(y, `${testid} top`).toBeGreaterThanOrEqual(0);
  expect(x + width, `${testid} right`).toBeLessThanOrEqual(VIEWPORT.width);
  expect(y + height, `${testid} bottom`).toBeLessThanOrEqual(VIEWPORT.height);
  expect(await page.getByTestId(testid).isVisible()).toBe(true);
  return { x, y, w: width, h: height };
}

/** Every form control on the page has a <label> (for= or wrapping). */
async function expectLabelled(page: Page): Promise<void> {
  const unlabelled = await page.evaluate(() =>
    [...globalThis.document.querySelectorAll('input, select, textarea')]
      .filter((el) => ((el as unknown as { labels: unknown[] }).labels ?? []).length === 0)
      .map((el) => el.outerHTML),
  );
  expect(unlabelled).toEqual([]);
}

describe('review web UI in Chromium', () => {
  let redis: OwnedRedis | undefined;
  let cleanupDir: (() => Promise<void>) | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let base: string;
  let token: string;
  let worker: Proc;
  let globals: string[];
  let gammaRoot: string;
  let dataDir: string;
  let consoleErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install it (Debian: \`apt-get install -y chromium\`) to run the browser test; it never downloads a browser.`,
      );
    }
    requireBuiltCli();
    await mkdir(SHOTS, { recursive: true });

    redis = await startOwnedRedis();
    const made = await makeDataDir();
    cleanupDir = made.cleanup;
    dataDir = made.dataDir;
    await installPackage(dataDir, FIXTURE_INSPECTOR_DIST, PLUGIN);
    const projectsDir = join(dataDir, 'work');
    const alpha = await makeProject(projectsDir, 'alpha', ['package.json']);
    const beta = await makeProject(projectsDir, 'beta', ['go.mod', '.switchyard/project.yml']);
    gammaRoot = await makeProject(projectsDir, 'gamma');
    globals = ['--data-dir', dataDir, '--redis-url', redis.url, '--prefix', uniquePrefix('ui')];
    for (const root of [alpha, beta]) {
      const added = await runCli(globals, ['project', 'add', root, '--trust']);
      expect(added.code, added.out).toBe(0);
    }

    worker = await launch('worker', globals, ['worker', '--concurrency', '2'], 'worker-ready');
    await launch('scheduler', globals, ['scheduler'], 'scheduler-synced');
    const port = await freePort();
    await launch('api', globals, ['api', '--port', String(port)], 'listening');
    base = `http://127.0.0.1:${port}`;
    token = (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: VIEWPORT });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    consoleErrors = collectFailures(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    for (const proc of procs.reverse()) await stop(proc).catch(() => {});
    await redis?.stop().catch(() => {});
    await cleanupDir?.().catch(() => {});
  }, 60_000);

  it('serves the UI under a strict Content-Security-Policy', async () => {
    const response = await fetch(`${base}/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('signs in with the api token and lists the plugin', async () => {
    await page.goto(`${base}/`);
    await page.getByTestId('token-input').waitFor();
    expect(await page.getByLabel('API token').count()).toBe(1);
    await expectLabelled(page);
    await shot(page, '01-sign-in');
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('plugins-table').waitFor();
    expect(await page.evaluate(() => globalThis.location.hash)).toBe('#/plugins');
    // Re-read the packages from disk (admin), then the plugin is listed.
    await page.getByTestId('plugins-refresh').click();
    await page.getByTestId('flash').waitFor();
    const row = page.locator('[data-testid="plugins-table"] tr', {
      has: page.getByTestId(`plugin-link-${PLUGIN}`),
    });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/untrusted[\s\S]*disabled/);
    await shot(page, '02-plugins');
  });

  it('shows the full fingerprint and the OS trust boundary within the first viewport', async () => {
    await page.getByTestId(`plugin-link-${PLUGIN}`).click();
    await page.getByTestId('fingerprint').waitFor();
    const detail = (await (
      await fetch(`${base}/api/v1/plugins/${PLUGIN}`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { fingerprint: string; osTrustBoundary: string };
    expect(detail.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(detail.osTrustBoundary).toBe(OS_TRUST_BOUNDARY_STATEMENT);

    const fpBox = await inFirstViewport(page, 'fingerprint');
    const boundaryBox = await inFirstViewport(page, 'trust-boundary');
    // Grouped for reading, but the text (what a copy gives) is the full 64 characters.
    expect(await page.getByTestId('fingerprint').textContent()).toBe(detail.fingerprint);
    expect(await page.locator('[data-testid="fingerprint"] .fp-group').count()).toBe(8);
    expect(await page.getByTestId('trust-boundary-text').textContent()).toBe(OS_TRUST_BOUNDARY_STATEMENT);
    await inFirstViewport(page, 'trust-confirm');
    // Protocol, capabilities, and every requested scope with what it allows.
    expect(await page.getByTestId('plugin-protocol').textContent()).toBe('switchyard.plugin/v1');
    expect(await page.getByTestId('plugin-capabilities').textContent()).toBe(
      'project.inspect, project.operate',
    );
    const scopes = await page.getByTestId('requested-scopes').innerText();
    for (const scope of ['project.metadata.read', 'project.files.read', 'project.operate'])
      expect(scopes).toContain(scope);
    expect(scopes).toContain("Receive the project's root path");
    await expectLabelled(page);
    await shot(page, '03-review-first-viewport');
    await shot(page, '03-review-full-page', true);
    console.info(
      `fingerprint box ${JSON.stringify(fpBox)}, trust-boundary box ${JSON.stringify(boundaryBox)} in ${VIEWPORT.width}x${VIEWPORT.height}`,
    );
  });

  it('trusts only after the fingerprint prefix is confirmed', async () => {
    const fingerprint = (await page.getByTestId('fingerprint').textContent())!;
    const button = page.getByTestId('trust-button');
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('trust-confirm').fill('000000000000');
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('trust-confirm').fill(fingerprint.slice(0, 11));
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('trust-confirm').fill(fingerprint.slice(0, 12));
    expect(await button.isDisabled()).toBe(false);
    await shot(page, '04-trust-confirmed');
    await button.click();
    await page.getByTestId('trust-done').waitFor();
    expect(await page.getByTestId('plugin-trust').innerText()).toContain('trusted');
    expect(await page.getByTestId('plugin-enabled').innerText()).toContain('disabled');
    expect(await page.getByTestId('flash').innerText()).toContain(fingerprint);
    await shot(page, '05-trusted');
  });

  it('lists the call policy and what the worker host enforces, and what it does not', async () => {
    expect(await page.getByTestId('plugin-network').innerText()).toMatch(
      /^none — the default for a package trusted now/,
    );
    expect(await page.getByTestId('plugin-resource-limits').innerText()).toBe(
      'memory 2 GiB, CPU 30m, file size 1 GiB, open files 1024, processes 256, disk 256 MiB',
    );
    const enforcement = await page.getByTestId('plugin-enforcement').innerText();
    expect(enforcement).toMatch(/worker:\S+:\d+/);
    expect(enforcement).toMatch(/enforced: .*signal scoping/);
    expect(enforcement).toMatch(/not enforced: /);
  });

  it('enables with exactly the two scopes checked, none pre-checked', async () => {
    const boxes = page.locator('[data-testid^="enable-scope-"]');
    expect(await boxes.count()).toBe(3);
    for (let i = 0; i < 3; i += 1) expect(await boxes.nth(i).isChecked()).toBe(false);
    expect(await page.getByTestId('enable-button').isDisabled()).toBe(true);
    await page.getByTestId('enable-scope-project.metadata.read').check();
    expect(await page.getByTestId('enable-button').isDisabled()).toBe(false);
    await page.getByTestId('enable-scope-project.files.read').check();
    await page.getByTestId('enable-button').click();
    await page.waitForFunction(
      () =>
        globalThis.document
          .querySelector('[data-testid="plugin-enabled"]')
          ?.textContent?.includes('enabled') &&
        !globalThis.document
          .querySelector('[data-testid="plugin-enabled"]')
          ?.textContent?.includes('disabled'),
    );
    expect(await page.getByTestId('granted-scopes').textContent()).toBe(
      'project.metadata.read, project.files.read',
    );
    await shot(page, '06-enabled', true);
  });

  it('adds a project from the projects page and toggles trust', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Projects' }).click();
    await page.getByTestId('projects-table').waitFor();
    // A relative path is refused by the api; its problem detail shows next to the form.
    await page.getByTestId('project-path').fill('relative/dir');
    await page.getByTestId('project-add').click();
    await page.getByTestId('project-add-error').waitFor();
    expect(await page.getByTestId('project-add-error').innerText()).toMatch(/^4\d\d /);
    await shot(page, '07-project-error');
    await page.getByTestId('project-path').fill(gammaRoot);
    await page.getByLabel('Display name (optional)').fill('Gamma service');
    await page.getByTestId('project-trust').check();
    await page.getByTestId('project-add').click();
    await page.getByTestId('project-untrust-gamma').waitFor();
    expect(await page.getByTestId('projects-table').innerText()).toContain('Gamma service');
    await page.getByTestId('project-untrust-beta').click();
    await page.getByTestId('project-trust-beta').click();
    await page.getByTestId('project-untrust-beta').waitFor();
    await expectLabelled(page);
    await shot(page, '08-projects');
  });

  it('runs a batch over all trusted projects with live progress and per-project facts', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Batches' }).click();
    await page.getByTestId('batch-start').waitFor();
    expect(await page.getByTestId('batch-plugin').inputValue()).toBe(PLUGIN);
    expect(await page.getByTestId('batch-all').isChecked()).toBe(true);
    await expectLabelled(page);
    // No worker while the batch starts: the page must show it running, reading the event stream.
    await stop(worker);
    const streamed = page.waitForResponse((r) => /\/api\/v1\/batches\/[^/]+\/events$/.test(r.url()));
    await page.getByTestId('batch-start').click();
    await page.waitForFunction(() => /^#\/batches\/.+/.test(globalThis.location.hash));
    expect((await streamed).headers()['content-type']).toContain('text/event-stream');
    await page.waitForSelector('[data-testid="batch-progress-card"][data-live="stream"]');
    expect(await page.getByTestId('batch-progress-label').innerText()).toContain('0 of 3 projects done');
    expect(await page.getByTestId('batch-state').innerText()).toContain('running');
    await expectLabelled(page);
    await shot(page, '09-batch-running');
    worker = await launch('worker', globals, ['worker', '--concurrency', '2'], 'worker-ready');
    await page.waitForFunction(() =>
      globalThis.document.querySelector('[data-testid="batch-state"]')?.textContent?.includes('succeeded'),
    );
    expect(await page.getByTestId('batch-progress-label').innerText()).toContain('3 of 3 projects done');
    // Finished from the stream's done event, not by falling back to polling.
    expect(await page.getByTestId('batch-progress-card').getAttribute('data-live')).toBe('stream');
    expect(
      await page
        .getByTestId('batch-progress')
        .evaluate((el) => [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemax')]),
    ).toEqual(['3', '3']);
    // The rows are read again once the stream says done: they may follow the state by a moment.
    await page.waitForFunction(() =>
      globalThis.document
        .querySelector('[data-testid="batch-results"]')
        ?.textContent?.includes('package.json'),
    );
    const results = await page.getByTestId('batch-results').innerText();
    expect(results).toContain('alpha');
    expect(results).toContain('beta');
    expect(results).toContain('gamma');
    expect(results).toContain('package.json');
    expect(results).toContain('go.mod');
    expect(await page.locator('[data-testid="batch-results"] tbody tr').count()).toBe(3);
    await shot(page, '10-batch-finished', true);
    // Failures only: the Failed chip (its count 0).
    expect(await page.getByTestId('count-failed').innerText()).toBe('0');
    await page.getByTestId('chip-failed').click();
    await page.waitForFunction(() =>
      globalThis.document
        .querySelector('[data-testid="batch-results"] tbody tr')
        ?.textContent?.includes('Nothing yet'),
    );
    await page.getByTestId('chip-all').click();
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="batch-results"] tbody tr').length === 3,
    );
  });

  it('runs an operation to its result after the plugin is re-enabled with project.operate', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Plugins' }).click();
    await page.getByTestId(`plugin-link-${PLUGIN}`).click();
    await page.getByTestId('disable-button').click();
    await page.waitForFunction(() =>
      globalThis.document.querySelector('[data-testid="plugin-enabled"]')?.textContent?.includes('disabled'),
    );
    for (const scope of ['project.metadata.read', 'project.files.read', 'project.operate'])
      await page.getByTestId(`enable-scope-${scope}`).check();
    await page.getByTestId('enable-button').click();
    await page.waitForFunction(() =>
      globalThis.document
        .querySelector('[data-testid="granted-scopes"]')
        ?.textContent?.includes('project.operate'),
    );

    await page.locator('#nav').getByRole('link', { name: 'Operations' }).click();
    await page.getByTestId('op-start').waitFor();
    await page.getByTestId('op-plugin').selectOption(PLUGIN);
    await page.getByTestId('op-project').selectOption('alpha');
    await page.getByTestId('op-action').selectOption('fixture.echo');
    // Invalid JSON is refused in the page, before anything is sent.
    await page.getByTestId('op-input').fill('{"hello": ');
    await page.getByTestId('op-start').click();
    await page.getByTestId('op-input-error').waitFor();
    expect(await page.evaluate(() => globalThis.location.hash)).toBe('#/operations');
    await page.getByTestId('op-input').fill('{"hello": "world"}');
    expect(await page.getByTestId('op-input-error').isHidden()).toBe(true);
    await page.getByTestId('op-start').click();
    await page.waitForSelector('[data-testid="op-state"][data-state="succeeded"]');
    expect(await page.getByTestId('op-result').innerText()).toContain('world');
    expect(await page.getByTestId('op-cancel').isHidden()).toBe(true);
    await shot(page, '11-operation-succeeded');
  });

  it('cancels an operation while it is queued (no worker running)', async () => {
    await stop(worker);
    await page.locator('#nav').getByRole('link', { name: 'Operations' }).click();
    await page.getByTestId('op-start').waitFor();
    await page.getByTestId('op-plugin').selectOption(PLUGIN);
    await page.getByTestId('op-project').selectOption('beta');
    await page.getByTestId('op-action').selectOption('fixture.echo');
    await page.getByTestId('op-start').click();
    await page.waitForSelector('[data-testid="op-state"][data-state="queued"]');
    await page.getByTestId('op-cancel').waitFor();
    await shot(page, '12-operation-queued');
    await page.getByTestId('op-cancel').click();
    await page.waitForSelector('[data-testid="op-state"][data-state="cancelled"]');
    expect(await page.getByTestId('op-error').innerText()).toContain('CANCELLED');
    expect(await page.getByTestId('op-cancel').isHidden()).toBe(true);
    await shot(page, '13-operation-cancelled');
    await page.locator('#nav').getByRole('link', { name: 'Operations' }).click();
    await page.getByTestId('operations-table').waitFor();
    const list = await page.getByTestId('operations-table').innerText();
    expect(list).toContain('cancelled');
    expect(list).toContain('succeeded');
    await expectLabelled(page);
    await shot(page, '14-operations');
  });

  it('shows the audit of what the reviewer did', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Audit' }).click();
    await page.getByTestId('audit-table').waitFor();
    const audit = await page.getByTestId('audit-table').innerText();
    expect(audit).toContain('token:initial-admin');
    expect(audit).toMatch(/trust/);
    expect(audit).toMatch(/enable/);
    expect(audit).toMatch(/cancel/);
    await shot(page, '15-audit', true);
  });

  it('flags a changed package with both fingerprints and asks for a new review', async () => {
    const before =
      (await page.evaluate(() => globalThis.sessionStorage.getItem('switchyard.token'))) !== null;
    expect(before).toBe(true);
    const manifest = join(dataDir, 'plugins', PLUGIN, 'plugin.json');
    await appendFile(manifest, '\n');
    await page.locator('#nav').getByRole('link', { name: 'Plugins' }).click();
    await page.getByTestId('plugins-refresh').click();
    await page.getByTestId('flash').waitFor();
    await page.getByTestId(`plugin-link-${PLUGIN}`).click();
    await page.getByTestId('changed-warning').waitFor();
    const detail = (await (
      await fetch(`${base}/api/v1/plugins/${PLUGIN}`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { fingerprint: string; trustedFingerprint: string; trust: string; enabled: boolean };
    expect(detail.trust).toBe('changed');
    expect(detail.enabled).toBe(false);
    expect(await page.getByTestId('trusted-fingerprint').textContent()).toBe(detail.trustedFingerprint);
    expect(await page.getByTestId('current-fingerprint').textContent()).toBe(detail.fingerprint);
    expect(detail.fingerprint).not.toBe(detail.trustedFingerprint);
    expect(await page.getByTestId('changed-warning').innerText()).toContain('must be reviewed again');
    expect(await page.getByTestId('plugin-trust').innerText()).toContain('changed');
    await inFirstViewport(page, 'changed-warning');
    // The trust form asks for the new fingerprint; enabling waits for it.
    expect(await page.getByTestId('trust-button').isDisabled()).toBe(true);
    expect(await page.getByTestId('enable-scope-project.operate').isDisabled()).toBe(true);
    await shot(page, '16-changed', true);
  });

  it('a viewer sees no admin or operator action it could not take, and is told which role it needs', async () => {
    const created = await fetch(`${base}/api/v1/tokens`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ui-viewer', role: 'viewer' }),
    });
    expect(created.status).toBe(201);
    const viewerToken = ((await created.json()) as { token: string }).token;
    const context = await browser!.newContext({ viewport: VIEWPORT });
    try {
      const viewer = await context.newPage();
      viewer.setDefaultTimeout(20_000);
      await viewer.goto(`${base}/`);
      await viewer.getByTestId('token-input').fill(viewerToken);
      await viewer.getByTestId('sign-in').click();
      await viewer.getByTestId('plugins-table').waitFor();
      expect(await viewer.getByTestId('plugins-refresh').count()).toBe(0);

      // The plugin changed in the previous test: an admin would see the trust form here.
      await viewer.getByTestId(`plugin-link-${PLUGIN}`).click();
      await viewer.getByTestId('trust-needs-role').waitFor();
      expect(await viewer.getByTestId('trust-needs-role').innerText()).toBe(
        'Trusting a fingerprint needs the admin role; token ui-viewer has viewer.',
      );
      expect(await viewer.getByTestId('trust-button').count()).toBe(0);
      expect(await viewer.getByTestId('trust-confirm').count()).toBe(0);
      expect(await viewer.getByTestId('enable-button').isDisabled()).toBe(true);
      expect(await viewer.getByTestId('enable-needs-role').isVisible()).toBe(true);
      expect(await viewer.getByTestId('disable-button').isDisabled()).toBe(true);
      expect(await viewer.getByTestId('health-button').isDisabled()).toBe(true);
      await shot(viewer, '16a-viewer-plugin', true);

      await viewer.locator('#nav').getByRole('link', { name: 'Projects' }).click();
      await viewer.getByTestId('projects-needs-role').waitFor();
      expect(await viewer.getByTestId('project-add').count()).toBe(0);
      expect(
        await viewer.locator('[data-testid^="project-trust-"], [data-testid^="project-untrust-"]').count(),
      ).toBe(0);

      await viewer.locator('#nav').getByRole('link', { name: 'Batches' }).click();
      await viewer.getByTestId('batch-start-needs-role').waitFor();
      expect(await viewer.getByTestId('batch-start').count()).toBe(0);

      await viewer.locator('#nav').getByRole('link', { name: 'Operations' }).click();
      await viewer.getByTestId('op-start-needs-role').waitFor();
      expect(await viewer.getByTestId('op-start').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('returns to sign-in with a clear message when the token is rejected', async () => {
    await page.evaluate(() => globalThis.sessionStorage.setItem('switchyard.token', 'sy_bogus_nottoken'));
    await page.reload();
    await page.getByTestId('sign-in-message').waitFor();
    expect(await page.getByTestId('sign-in-message').innerText()).toContain('401');
    expect(await page.evaluate(() => globalThis.sessionStorage.getItem('switchyard.token'))).toBeNull();
    await shot(page, '17-rejected-token');
    // No script or style was blocked by the CSP, nothing threw, and no request failed but the
    // deliberate ones (the relative project path's 400 and the bogus token's 401).
    const expected = [/status of 40[01] /, /^400 POST .*\/api\/v1\/projects$/];
    const unexpected = consoleErrors.filter((text) => !expected.some((pattern) => pattern.test(text)));
    expect(unexpected).toEqual([]);
  });
});
