// The web UI in Debian's Chromium for the browser tests: an api process on a
// free port for an installation, and a page signed in with the installation's
// first admin token (what a person pastes), with every Content Security Policy
// violation and page error collected. `close()` undoes all of it.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { globalArgs, requireBuiltCli, spawnCliProcess, terminate, untilLogged } from './cli-process.js';
import { REPO } from './data-dir.js';
import { freePort } from './redis.js';
import type { OwnedRedis } from './redis.js';
import { killAllSpawned, type Installation } from './workers.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(REPO, 'test-artifacts', 'screenshots');

export interface SignedInUi {
  base: string;
  browser: Browser;
  page: Page;
  /** CSP violations and uncaught page errors, as the console reported them. */
  problems: string[];
  /** Every console error, uncaught page error and answer of 400 or more but 401 (a sign-in refused). */
  failures: string[];
  close(): Promise<void>;
}

/** Chromium at CHROMIUM and the built CLI, or a clear error naming the fix; the screenshots directory made. */
export async function requireBrowser(): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is missing at ${CHROMIUM} (apt-get install -y chromium)`);
  requireBuiltCli();
  await mkdir(SHOTS, { recursive: true });
}

/** Debian's Chromium, headless, never a downloaded browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** From now on, every console error, uncaught error and answer of 400 or more but 401 (a sign-in refused) on `page`. */
export function collectFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(message.text());
  });
  page.on('pageerror', (error) => failures.push(`pageerror: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && response.status() !== 401)
      failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  return failures;
}

export async function openSignedIn(
  installation: Installation,
  viewport = { width: 1280, height: 900 },
): Promise<SignedInUi> {
  const port = await freePort();
  const api = spawnCliProcess([...globalArgs(installation), 'api', '--port', String(port)]);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => {});
    await terminate(api, 5_000).catch(() => {});
  };
  try {
    await untilLogged(api, 'api', 'listening', 30_000);
    const base = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport })).newPage();
    page.setDefaultTimeout(20_000);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    const failures = collectFailures(page);
    const token = (await readFile(join(installation.dataDir, 'api-token'), 'utf8')).trim();
    await page.goto(`${base}/`);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('plugins-table').waitFor();
    return { base, browser, page, problems, failures, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A browser test's teardown, in order: the page and its api, every process the test spawned
 * (workers), the installation, its Redis. Each part may be missing (a setup that failed half way).
 */
export async function closeUiWorld(world: {
  ui?: SignedInUi | undefined;
  installation?: Installation | undefined;
  redis?: OwnedRedis | undefined;
}): Promise<void> {
  await world.ui?.close();
  await killAllSpawned();
  await world.installation?.close();
  await world.redis?.stop().catch(() => {});
}
