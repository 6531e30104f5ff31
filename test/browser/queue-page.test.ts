// The Queue page in Chromium (GET /queue): with a plugin capped at one call
// at once, an operation holding the slot and a batch whose call waits for it,
// the page lists both under their requester and the worker slot waiting with
// the reason; at 1280 and 390 px wide.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHOTS, openSignedIn, requireBrowser } from '../support/browser.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, readLines, startWorker, waitFor } from '../support/workers.js';

const suite = useQueueSuite('9-queue-page');

describe('the Queue page in Chromium', () => {
  it('shows the work by requester and the worker slots, a call held back by the cap waiting with why', async () => {
    await requireBrowser();
    const installation = await suite.install('queue-page');
    const { runtime } = installation;
    const heldRoot = await installation.addProject('held');
    await installation.addProject('other');
    await runtime.plugins.setPolicy(PLUGIN_ID, { maxConcurrency: 1 }, ACTOR);
    await Promise.all([
      startWorker(installation, { concurrency: 1, operationPriorityMs: 0 }),
      startWorker(installation, { concurrency: 1, operationPriorityMs: 0 }),
    ]);
    const { operation } = await runtime.operations.create(
      {
        pluginId: PLUGIN_ID,
        projectId: 'held',
        action: 'append',
        input: { append: 'held', sleepMs: 60_000 },
      },
      ACTOR,
    );
    await waitFor(
      'the operation to run',
      async () => (await readLines(join(heldRoot, 'operations.log'))).length,
    );
    const batch = await runtime.batches.create(PLUGIN_ID, ['other'], ACTOR);
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 390, height: 844 },
    ]) {
      const ui = await openSignedIn(installation, viewport);
      try {
        await ui.page.goto(`${ui.base}/#/queue`);
        const work = ui.page.getByTestId('queue-work-table');
        await expect.poll(async () => work.textContent(), { timeout: 30_000 }).toContain(batch.batchId);
        const text = await work.textContent();
        expect(text).toContain(operation.id);
        expect(text).toContain(ACTOR);
        const slots = ui.page.getByTestId('queue-workers-table');
        await expect.poll(async () => slots.textContent(), { timeout: 30_000 }).toContain('waiting: plugin');
        expect(await slots.textContent()).toContain('--max-concurrency');
        await ui.page.screenshot({ path: join(SHOTS, `queue-page-${viewport.width}.png`), fullPage: true });
        // Nothing of the page is cut off at the narrow width: the tables scroll inside their own box.
        const overflow = await ui.page.evaluate(
          () => document.documentElement.scrollWidth - window.innerWidth,
        );
        expect(overflow).toBeLessThanOrEqual(1);
        expect(ui.problems).toEqual([]);
      } finally {
        await ui.close();
      }
    }
  }, 240_000);
});
