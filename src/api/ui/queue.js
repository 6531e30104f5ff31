// @ts-check
// Queue: what waits and what runs now (GET /queue, `switchyard queue`): per
// requester and per batch or operation, and per worker slot. Read again every
// few seconds while the page is open.
import { get } from './api.js';
import { errorBox, h, table, when } from './dom.js';

/** @typedef {import('./router.js').ViewContext} ViewContext */
/** @typedef {import('../../core/contract/index.js').AnswerOf<'queue'>} QueueAnswer */

const REFRESH_MS = 3_000;

/** @param {number} share */
const percent = (share) => `${Math.round(share * 100)}%`;

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function queueView(container, { signal }) {
  const errors = errorBox('queue-error');
  const summary = h('p', { class: 'lede', testid: 'queue-summary' });
  const work = h('div', { testid: 'queue-work' });
  const workers = h('div', { testid: 'queue-workers' });
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Queue')),
    summary,
    errors.el,
    h('h2', {}, 'Work by requester'),
    work,
    h('h2', {}, 'Worker slots'),
    workers,
  );
  const load = async () => {
    /** @type {QueueAnswer} */
    let view;
    try {
      view = await get('/queue', signal);
      errors.clear();
    } catch (error) {
      if (!signal.aborted) errors.show(error);
      return;
    }
    summary.textContent = `${view.running} calls running now; as of ${new Date(view.at).toLocaleTimeString()}.`;
    work.replaceChildren(
      table(
        ['Requester', 'Kind', 'Id', 'Plugin', 'Waiting', 'Running', 'Share', 'Note'],
        view.requesters.flatMap((requester) => [
          [
            h('strong', {}, requester.requester),
            'all',
            '',
            '',
            String(requester.waiting),
            String(requester.running),
            percent(requester.share),
            '',
          ],
          ...requester.work.map((item) => [
            '',
            item.kind,
            h(
              'a',
              {
                href: `#/${item.kind === 'batch' ? 'batches' : 'operations'}/${encodeURIComponent(item.id)}`,
              },
              h('code', {}, item.id),
            ),
            item.pluginId,
            String(item.waiting),
            String(item.running),
            percent(item.share),
            item.waitingForCaps > 0
              ? h('span', { class: 'detail' }, `${item.waitingForCaps} held back: ${item.reason ?? 'caps'}`)
              : '',
          ]),
        ]),
        { class: 'data', testid: 'queue-work-table' },
      ),
    );
    workers.replaceChildren(
      table(
        ['Worker', 'Slot', 'State', 'Plugin', 'Kind', 'Project', 'Since', 'Last took work'],
        view.workers.flatMap((worker) =>
          worker.slots.length === 0
            ? [[h('code', {}, worker.worker), '—', 'idle', '', '', '', '', 'never']]
            : worker.slots.map((slot) => [
                h('code', {}, worker.worker),
                String(slot.slot),
                slot.state === 'waiting'
                  ? h('span', { class: 'detail' }, slot.reason ?? 'waiting')
                  : slot.state,
                slot.pluginId ?? '',
                slot.kind ?? '',
                slot.projectId ?? '',
                when(slot.since),
                slot.lastTookAt ? when(slot.lastTookAt) : 'never',
              ]),
        ),
        { class: 'data', testid: 'queue-workers-table' },
      ),
    );
  };
  await load();
  const timer = setInterval(() => void load(), REFRESH_MS);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
