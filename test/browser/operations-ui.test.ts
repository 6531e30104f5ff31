// The operations pages of the web UI in everyday use, in Debian's Chromium
// against a real installation (owned Redis, worker, api from dist/): the run
// form offers the advertised actions with their risk and confirms one that
// may change the project; an operation's page shows input beside output, who
// requested and cancelled it, the worker and the duration, and runs it again;
// the list filters (outcome unknown included) and pages; the enable form
// starts from the granted scopes; the audit filters by actor, target and
// time; times read local with ISO on hover; nothing overflows at 390 px.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, launchChromium, requireBrowser } from '../support/browser.js';
import {
  completion,
  spawnCliProcess,
  terminate,
  untilLogged,
  type CliProcess,
} from '../support/cli-process.js';
import {
  FIXTURE_INSPECTOR_DIST,
  installPackage,
  makeDataDir,
  makeProject,
  uniquePrefix,
} from '../support/data-dir.js';
import { freePort, startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { PLUGIN_ID as QUEUE_PLUGIN, installQueuePlugin } from '../support/workers.js';
import { reviewAndEnable } from '../cli/support.js';

const ECHO = 'fixture-inspector';
const SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/;

interface Operation {
  id: string;
  state: string;
  input?: unknown;
  requestedBy?: string;
  cancelledBy?: string;
  worker?: string;
}

const procs: CliProcess[] = [];

describe('operations in the web UI', () => {
  let redis: OwnedRedis | undefined;
  let cleanupDir: (() => Promise<void>) | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let base = '';
  let token = '';
  let ciToken = '';
  let prefix = '';
  let globals: string[] = [];
  let cancelledId = '';
  const consoleErrors: string[] = [];

  async function cli(args: string[]): Promise<{ code: number | null; out: string }> {
    const proc = spawnCliProcess([...globals, '--json', ...args]);
    const { code } = await completion(proc, { timeoutMs: 60_000 });
    return { code, out: proc.output() };
  }

  async function launch(role: string, args: string[], ready: string): Promise<CliProcess> {
    const proc = spawnCliProcess([...globals, ...args]);
    procs.push(proc);
    await untilLogged(proc, role, ready, 30_000);
    return proc;
  }

  async function api<T>(method: string, path: string, body?: unknown, as = token): Promise<T> {
    const response = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${as}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300);
    return JSON.parse(text) as T;
  }

  async function signIn(target: Page): Promise<void> {
    await target.goto(`${base}/`);
    await target.getByTestId('token-input').fill(token);
    await target.getByTestId('sign-in').click();
    await target.getByTestId('plugins-table').waitFor();
  }

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    const made = await makeDataDir();
    cleanupDir = made.cleanup;
    const dataDir = made.dataDir;
    await installPackage(dataDir, FIXTURE_INSPECTOR_DIST, ECHO);
    const queueDir = await installQueuePlugin(dataDir);
    prefix = uniquePrefix('ops-ui');
    globals = ['--data-dir', dataDir, '--redis-url', redis.url, '--prefix', prefix];
    for (const name of ['alpha', 'beta']) {
      const root = await makeProject(join(dataDir, 'work'), name, ['package.json']);
      const added = await cli(['project', 'add', root, '--trust']);
      expect(added.code, added.out).toBe(0);
    }
    const installation = { dataDir, redisUrl: redis.url, prefix };
    await reviewAndEnable(installation, ECHO, SCOPES);
    // The queue fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
    await reviewAndEnable(installation, QUEUE_PLUGIN, [], { refresh: false });
    const confined = await cli([
      'plugin',
      'set',
      QUEUE_PLUGIN,
      '--allow-write',
      queueDir,
      '--allow-read',
      '/proc',
    ]);
    expect(confined.code, confined.out).toBe(0);
    const enabled = await cli([
      'plugin',
      'enable',
      QUEUE_PLUGIN,
      ...SCOPES.flatMap((s) => ['--scope', s]),
      '--yes',
    ]);
    expect(enabled.code, enabled.out).toBe(0);

    const port = await freePort();
    await launch('api', ['api', '--port', String(port)], 'listening');
    base = `http://127.0.0.1:${port}`;
    token = (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();
    ciToken = (await api<{ token: string }>('POST', '/tokens', { name: 'ci', role: 'operator' })).token;

    // Before any worker runs: one operation cancelled while queued, by `ci`.
    const queued = await api<Operation>(
      'POST',
      '/operations',
      { pluginId: ECHO, projectId: 'beta', action: 'fixture.echo' },
      ciToken,
    );
    cancelledId = (await api<Operation>('POST', `/operations/${queued.id}/cancel`, {}, ciToken)).id;
    // 51 more (a page is 50), so the list has a second page.
    for (let index = 0; index < 51; index += 1)
      await api('POST', '/operations', {
        pluginId: ECHO,
        projectId: 'alpha',
        action: 'fixture.echo',
        input: { n: index },
      });

    await launch('worker', ['worker', '--concurrency', '2'], 'worker-ready');
    // Both plugins inspect both projects, so each advertises its actions.
    for (const plugin of [ECHO, QUEUE_PLUGIN]) {
      const batch = await cli(['inspect', plugin, '--all']);
      expect(batch.code, batch.out).toBe(0);
    }
    await waitFor(
      'the 51 operations to finish',
      async () => {
        const { items } = await api<{ items: Operation[] }>('GET', '/operations?state=succeeded&limit=100');
        return items.length >= 51;
      },
      60_000,
    );

    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
    await signIn(page);
  }, 240_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    for (const proc of procs.reverse()) await terminate(proc, 10_000).catch(() => {});
    await redis?.stop().catch(() => {});
    await cleanupDir?.().catch(() => {});
  }, 60_000);

  async function openRunForm(plugin: string, project: string): Promise<void> {
    await page.goto(`${base}/#/operations`);
    await page.getByTestId('op-start').waitFor();
    await page.getByTestId('op-plugin').selectOption(plugin);
    await page.getByTestId('op-project').selectOption(project);
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="op-action"] option').length > 0,
    );
  }

  it('offers the actions the plugin advertised, each with its risk', async () => {
    await openRunForm(QUEUE_PLUGIN, 'alpha');
    const options = await page.locator('[data-testid="op-action"] option').allInnerTexts();
    expect(options).toEqual(['Append (append) — risk: low', 'Preview append (preview) — risk: none']);
    await openRunForm(ECHO, 'alpha');
    expect(await page.locator('[data-testid="op-action"] option').allInnerTexts()).toEqual([
      'Echo (fixture.echo) — risk: none',
    ]);
    expect(await page.getByTestId('op-action-note').innerText()).toContain('Risk: none');
  });

  it('confirms an action that may change the project, naming it and the project, before queueing it', async () => {
    const before = (await api<{ items: Operation[] }>('GET', `/operations?pluginId=${QUEUE_PLUGIN}`)).items;
    await openRunForm(QUEUE_PLUGIN, 'beta');
    await page.getByTestId('op-input').fill('{"append": "from the browser"}');
    await page.getByTestId('op-start').click();
    const dialog = page.getByTestId('op-confirm');
    await dialog.waitFor();
    const text = await page.getByTestId('op-confirm-text').innerText();
    expect(text).toContain('append');
    expect(text).toContain('beta');
    expect(text).toContain('low');
    await page.screenshot({ path: join(SHOTS, 'ops-confirm.png') });
    await page.getByTestId('op-confirm-cancel').click();
    expect(await dialog.isVisible()).toBe(false);
    expect((await api<{ items: Operation[] }>('GET', `/operations?pluginId=${QUEUE_PLUGIN}`)).items).toEqual(
      before,
    );

    await page.getByTestId('op-start').click();
    await dialog.waitFor();
    await page.getByTestId('op-confirm-run').click();
    await page.waitForURL(/#\/operations\/op_/);
    const queued = (await api<{ items: Operation[] }>('GET', `/operations?pluginId=${QUEUE_PLUGIN}`)).items;
    expect(queued).toHaveLength(before.length + 1);
  });

  it("shows an operation's input beside its output, who, where and how long, and runs it again", async () => {
    await openRunForm(ECHO, 'alpha');
    await page.getByTestId('op-input').fill('{"hello": "again"}');
    await page.getByTestId('op-start').click();
    await page.waitForSelector('[data-testid="op-state"][data-state="succeeded"]');
    const id = decodeURIComponent(page.url().split('#/operations/')[1]!);
    const stored = await api<Operation>('GET', `/operations/${id}`);

    expect(await page.getByTestId('op-input-shown').innerText()).toContain('"hello": "again"');
    expect(await page.getByTestId('op-result').innerText()).toContain('again');
    const inputBox = (await page.getByTestId('op-input-shown').boundingBox())!;
    const outputBox = (await page.getByTestId('op-outcome').boundingBox())!;
    expect(Math.abs(inputBox.y - outputBox.y)).toBeLessThan(2);
    expect(outputBox.x).toBeGreaterThan(inputBox.x + inputBox.width);
    expect(await page.getByTestId('op-requested-by').innerText()).toBe('token:initial-admin');
    expect(await page.getByTestId('op-worker').innerText()).toBe(stored.worker);
    expect(stored.worker).toMatch(/^worker:/);
    expect(await page.getByTestId('op-duration').innerText()).toMatch(/^\d+(ms|s)$/);
    expect(await page.getByTestId('op-cancelled-by').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'ops-operation.png'), fullPage: true });

    await page.getByTestId('op-run-again').click();
    await page.waitForURL(/#\/operations$/);
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="op-action"] option').length > 0,
    );
    expect(await page.getByTestId('op-plugin').inputValue()).toBe(ECHO);
    expect(await page.getByTestId('op-project').inputValue()).toBe('alpha');
    expect(await page.getByTestId('op-action').inputValue()).toBe('fixture.echo');
    expect(JSON.parse(await page.getByTestId('op-input').inputValue())).toEqual({ hello: 'again' });
  });

  it('names who cancelled an operation', async () => {
    await page.goto(`${base}/#/operations/${cancelledId}`);
    await page.waitForSelector('[data-testid="op-state"][data-state="cancelled"]');
    expect(await page.getByTestId('op-cancelled-by').innerText()).toBe('token:ci');
    expect(await page.getByTestId('op-requested-by').innerText()).toBe('token:ci');
  });

  it('shows stderr and every time in local time, the ISO time on hover', async () => {
    await page.goto(`${base}/#/operations/${cancelledId}`);
    const requested = page.locator('[data-testid="op-requested"] time');
    const iso = (await requested.getAttribute('title'))!;
    expect(iso).toMatch(ISO);
    expect(await requested.innerText()).toBe(await page.evaluate((at) => new Date(at).toLocaleString(), iso));
    // The queue fixture writes a stderr line every 50 ms while it works.
    const ran = await api<Operation>('POST', '/operations', {
      pluginId: QUEUE_PLUGIN,
      projectId: 'alpha',
      action: 'append',
      input: { sleepMs: 300, stderrEveryMs: 50 },
    });
    await page.goto(`${base}/#/operations/${ran.id}`);
    await page.waitForSelector('[data-testid="op-state"][data-state="succeeded"]');
    const line = page.locator('[data-testid="op-logs"] time').first();
    await line.waitFor();
    expect(await line.getAttribute('title')).toMatch(ISO);
    expect(await page.getByTestId('op-logs').innerText()).not.toMatch(ISO);
    // Other pages too: the batches list.
    await page.goto(`${base}/#/batches`);
    const created = page.locator('[data-testid="batches-table"] tbody time').first();
    await created.waitFor();
    expect(await created.getAttribute('title')).toMatch(ISO);
    expect(await created.innerText()).not.toMatch(ISO);
  });

  it('filters the list by plugin, project, state (outcome unknown too) and requester, and pages past 50', async () => {
    // An operation whose plugin may have acted, as the runner records one.
    const marked = (await api<{ items: Operation[] }>('GET', `/operations?projectId=alpha&limit=1`))
      .items[0]!;
    const raw = new Redis(redis!.url);
    await raw.hset(`${prefix}:operation:${marked.id}`, 'state', 'failed', 'errorCode', 'OUTCOME_UNKNOWN');
    await raw.quit();

    await page.goto(`${base}/#/operations`);
    const rows = page.locator('[data-testid="operations-table"] tbody tr');
    await page.getByTestId('operations-table').waitFor();
    expect(await rows.count()).toBe(50);
    expect(await page.getByTestId('ops-older').isDisabled()).toBe(false);
    await page.getByTestId('ops-older').click();
    await page.waitForFunction(
      () => globalThis.document.querySelector('[data-testid="ops-page"]')?.textContent === 'Page 2',
    );
    const total = (await api<{ items: Operation[] }>('GET', '/operations?limit=500')).items.length;
    await page.waitForFunction(
      (n) => globalThis.document.querySelectorAll('[data-testid="operations-table"] tbody tr').length === n,
      total - 50,
    );
    await page.getByTestId('ops-newer').click();
    await page.waitForFunction(
      () => globalThis.document.querySelector('[data-testid="ops-page"]')?.textContent === 'Page 1',
    );

    /** Waits until the table lists exactly these operations, newest first (a read in flight may show the last filter's). */
    const listed = async (ids: string[]) =>
      page.waitForFunction((wanted) => {
        const cells = [
          ...globalThis.document.querySelectorAll('[data-testid="operations-table"] tbody tr td:first-child'),
        ];
        return JSON.stringify(cells.map((cell) => cell.textContent)) === JSON.stringify(wanted);
      }, ids);
    await page.getByTestId('ops-filter-requested-by').fill('token:ci');
    await page.getByTestId('ops-filter-requested-by').press('Enter');
    await listed([cancelledId]);
    await page.getByTestId('ops-filter-requested-by').fill('');
    await page.getByTestId('ops-filter-requested-by').press('Enter');

    const queueOps = (await api<{ items: Operation[] }>('GET', `/operations?pluginId=${QUEUE_PLUGIN}`)).items;
    expect(queueOps.length).toBeGreaterThan(0);
    await page.getByTestId('ops-filter-plugin').selectOption(QUEUE_PLUGIN);
    await listed(queueOps.map((op) => op.id));
    await page.getByTestId('ops-filter-plugin').selectOption('');
    await page.getByTestId('ops-filter-project').selectOption('beta');
    await page.getByTestId('ops-filter-state').selectOption('cancelled');
    await listed([cancelledId]);

    await page.getByTestId('ops-filter-project').selectOption('');
    await page.getByTestId('ops-filter-state').selectOption('outcome_unknown');
    await listed([marked.id]);
    expect(await rows.innerText()).toContain('outcome unknown');
    await page.screenshot({ path: join(SHOTS, 'ops-filtered.png') });
  });

  it('starts the enable form of an enabled plugin from the scopes it holds', async () => {
    await page.goto(`${base}/#/plugins/${ECHO}`);
    await page.getByTestId('enable-form').waitFor();
    for (const scope of SCOPES)
      expect(await page.getByTestId(`enable-scope-${scope}`).isChecked()).toBe(true);
  });

  it('filters the audit by actor, target and time', async () => {
    await page.goto(`${base}/#/audit`);
    await page.getByTestId('audit-table').waitFor();
    const rows = page.locator('[data-testid="audit-table"] tbody tr');
    await page.getByTestId('audit-actor').fill('token:ci');
    await page.getByTestId('audit-actor').press('Enter');
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="audit-table"] tbody tr').length === 2,
    );
    expect(await rows.allInnerTexts()).toEqual([
      expect.stringContaining('operation.cancel'),
      expect.stringContaining('operation.request'),
    ]);
    await page.getByTestId('audit-actor').fill('');
    await page.getByTestId('audit-target').fill(cancelledId);
    await page.getByTestId('audit-target').press('Enter');
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="audit-table"] tbody tr').length === 2,
    );
    // Until a time before any of it: nothing.
    await page.getByTestId('audit-until').fill('2001-01-01T00:00:00');
    await page.getByTestId('audit-until').dispatchEvent('change');
    await page.waitForFunction(() =>
      globalThis.document
        .querySelector('[data-testid="audit-table"] tbody')
        ?.textContent?.includes('Nothing yet'),
    );
    await page.getByTestId('audit-until').fill('');
    await page.getByTestId('audit-until').dispatchEvent('change');
    // Since a minute from now: nothing either; since a day ago: the two again.
    const local = (at: number) => {
      const date = new Date(at - new Date(at).getTimezoneOffset() * 60_000);
      return date.toISOString().slice(0, 19);
    };
    await page.getByTestId('audit-since').fill(local(Date.now() + 60_000));
    await page.getByTestId('audit-since').dispatchEvent('change');
    await page.waitForFunction(() =>
      globalThis.document
        .querySelector('[data-testid="audit-table"] tbody')
        ?.textContent?.includes('Nothing yet'),
    );
    await page.getByTestId('audit-since').fill(local(Date.now() - 86_400_000));
    await page.getByTestId('audit-since').dispatchEvent('change');
    await page.waitForFunction(
      () => globalThis.document.querySelectorAll('[data-testid="audit-table"] tbody tr').length === 2,
    );
  });

  it('fits a 390 px wide phone: no page scrolls sideways', async () => {
    const phone = await (await browser!.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    phone.setDefaultTimeout(20_000);
    await signIn(phone);
    const widths: Record<string, number> = {};
    for (const [name, hash, ready] of [
      ['plugins', '#/plugins', 'plugins-table'],
      ['operations', '#/operations', 'operations-table'],
      ['audit', '#/audit', 'audit-table'],
      ['operation', `#/operations/${cancelledId}`, 'op-card'],
    ] as const) {
      await phone.goto(`${base}/${hash}`);
      await phone.getByTestId(ready).waitFor();
      await phone.screenshot({ path: join(SHOTS, `ops-390-${name}.png`) });
      widths[name] = await phone.evaluate(() => globalThis.document.documentElement.scrollWidth);
    }
    expect(widths).toEqual({ plugins: 390, operations: 390, audit: 390, operation: 390 });
    await phone.context().close();
  });

  it('offers a viewer neither the run form nor run again', async () => {
    const viewerToken = (await api<{ token: string }>('POST', '/tokens', { name: 'looker', role: 'viewer' }))
      .token;
    const viewer = await (await browser!.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    viewer.setDefaultTimeout(20_000);
    await viewer.goto(`${base}/`);
    await viewer.getByTestId('token-input').fill(viewerToken);
    await viewer.getByTestId('sign-in').click();
    await viewer.getByTestId('plugins-table').waitFor();
    await viewer.goto(`${base}/#/operations/${cancelledId}`);
    await viewer.getByTestId('op-cancelled-by').waitFor();
    expect(await viewer.getByTestId('op-run-again').isHidden()).toBe(true);
    await viewer.goto(`${base}/#/operations`);
    await viewer.getByTestId('op-start-needs-role').waitFor();
    expect(await viewer.getByTestId('op-form').count()).toBe(0);
    await viewer.context().close();
  });

  it('raised no page error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
