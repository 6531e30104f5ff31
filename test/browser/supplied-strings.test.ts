// What a package and a project supply, on the surfaces a reviewer decides on,
// with real processes (an api process, Debian's Chromium, CLI processes):
// - a name holding U+202E (RIGHT-TO-LEFT OVERRIDE), never closed, cannot
//   reverse the id and version shown beside it on the plugins list, the
//   review page and the projects list (each string bidi-isolated, dom.js);
//   the CLI prints every bidi control as a visible escape;
// - before trust, plugin show, the API and the review page show the network
//   policy trusting will apply (none), not the one of a package trusted
//   before network confinement (allow).
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, closeUiWorld, openSignedIn, requireBrowser, type SignedInUi } from '../support/browser.js';
import { testManifest, writeScriptPackage } from '../support/manifest.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { ACTOR, createInstallation, runCli, type Installation } from '../support/workers.js';

const RLO = '\u202e';
/** Shown after an unclosed RLO, `tcepsni-elif` would read `file-inspect` and `3.2.1` would read `1.2.3`. */
const HOSTILE = { id: 'tcepsni-elif', name: `Helper ${RLO}`, version: '3.2.1' };
const PROJECT = { id: 'lartnec', name: `Billing \u200f${RLO}` };

describe('strings a package or a project supplies, and the network before trust', () => {
  let redis: OwnedRedis | undefined;
  let installation: Installation | undefined;
  let ui: SignedInUi | undefined;
  let page: Page;
  let base = '';
  let token = '';

  beforeAll(async () => {
    await requireBrowser();
    redis = await startOwnedRedis();
    installation = await createInstallation(redis.url, 'ui-supplied');
    const { runtime, dataDir, projectsDir } = installation;
    await writeScriptPackage(
      join(dataDir, 'plugins'),
      HOSTILE.id,
      testManifest(HOSTILE.id, { name: HOSTILE.name, version: HOSTILE.version }),
    );
    await runtime.plugins.refresh(ACTOR);
    const root = join(projectsDir, 'central');
    await mkdir(root);
    await runtime.projects.add(root, { id: PROJECT.id, name: PROJECT.name, trust: true }, ACTOR);
    ui = await openSignedIn(installation);
    ({ base, page } = ui);
    token = (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();
  }, 180_000);

  afterAll(() => closeUiWorld({ ui, installation, redis }), 60_000);

  /**
   * Whether `text`, inside `within`, is drawn in reading order: its first
   * character left of its last (an override drawing it reversed puts the
   * first on the right).
   */
  const drawnInOrder = (within: Locator, text: string) =>
    within.evaluate((root, wanted) => {
      const doc = root.ownerDocument;
      const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = (node.nodeValue ?? '').indexOf(wanted);
        if (at < 0) continue;
        const left = (offset: number) => {
          const range = doc.createRange();
          range.setStart(node, offset);
          range.setEnd(node, offset + 1);
          return range.getBoundingClientRect().left;
        };
        return left(at) < left(at + wanted.length - 1);
      }
      throw new Error(`${wanted} is not in the element`);
    }, text);

  it('the plugins list and the review page show the id and the version in reading order', async () => {
    await page.getByTestId('plugins-table').waitFor();
    const link = page.getByTestId(`plugin-link-${HOSTILE.id}`);
    await link.waitFor();
    expect(await drawnInOrder(link, HOSTILE.id)).toBe(true);
    const row = page.locator('[data-testid="plugins-table"] tr', { has: link });
    expect(await drawnInOrder(row, HOSTILE.version)).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'supplied-strings-plugins.png') });

    await link.click();
    await page.getByTestId('plugin-name').waitFor();
    const heading = page.locator('h1', { has: page.getByTestId('plugin-name') });
    expect(await drawnInOrder(heading, HOSTILE.id)).toBe(true);
    expect(await drawnInOrder(heading, HOSTILE.version)).toBe(true);
    // The name itself is still all there, control and all (what a copy gives).
    expect(await page.getByTestId('plugin-name').textContent()).toBe(HOSTILE.name);
    await page.screenshot({ path: join(SHOTS, 'supplied-strings-review.png') });
  });

  it('before trust the review page, the API and plugin show say no network: what trusting applies', async () => {
    const reason = /^what trusting it applies: no network/;
    await page.goto(`${base}/#/plugins/${HOSTILE.id}`);
    await page.getByTestId('plugin-network').waitFor();
    expect(await page.getByTestId('plugin-network').innerText()).toMatch(
      /^none — what trusting it applies: no network/,
    );
    const answer = await fetch(`${base}/api/v1/plugins/${HOSTILE.id}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const detail = (await answer.json()) as { policy: { network: string; networkReason: string } };
    expect(detail.policy.network).toBe('none');
    expect(detail.policy.networkReason).toMatch(reason);
    const json = await runCli(installation!, ['plugin', 'show', HOSTILE.id]);
    expect(json.code, json.stderr).toBe(0);
    const shown = JSON.parse(json.stdout) as typeof detail;
    expect(shown.policy).toMatchObject({ network: 'none', networkReason: expect.stringMatching(reason) });
    const human = await runCli(installation!, ['plugin', 'show', HOSTILE.id], { json: false });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/network: none — what trusting it applies: no network/);

    // Trusting applies what was shown.
    const { fingerprint } = await installation!.runtime.plugins.show(HOSTILE.id);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    await installation!.runtime.plugins.trust(HOSTILE.id, fingerprint!, ACTOR);
    const trusted = await installation!.runtime.plugins.show(HOSTILE.id);
    expect(trusted.policy.network).toBe('none');
  });

  it('the projects list shows the project id in reading order beside a name holding RLM and RLO', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Projects' }).click();
    const link = page.getByTestId(`project-link-${PROJECT.id}`);
    await link.waitFor();
    const cell = page.locator('td', { has: link });
    expect(await drawnInOrder(cell, PROJECT.id)).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'supplied-strings-projects.png') });
  });

  it('the CLI prints every bidi control of a name as a visible escape', async () => {
    for (const args of [
      ['plugin', 'list'],
      ['plugin', 'show', HOSTILE.id],
      ['project', 'list'],
    ]) {
      const run = await runCli(installation!, args, { json: false });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout, args.join(' ')).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
      // `plugin list` has no name column.
      if (args[1] === 'show') expect(run.stdout).toContain('Helper \\u202e');
      if (args[0] === 'project') expect(run.stdout).toContain('Billing \\u200f\\u202e');
    }
    expect(ui!.problems).toEqual([]);
  });
});
