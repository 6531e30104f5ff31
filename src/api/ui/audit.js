// @ts-check
// Audit: the newest entries, filtered, a page at a time. Health checks write an
// entry per run and would bury everything else: hidden unless asked for.
import { get } from './api.js';
import { field, formatTime, h, table } from './dom.js';

/** @typedef {import('./router.js').ViewContext} ViewContext */
/** @typedef {import('../../core/contract/index.js').AnswerOf<'audit'>} AuditPage */

const HEALTH_CHECKS = 'scheduler.health-checks';

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function auditView(container, { signal }) {
  const showHealth = h('input', { type: 'checkbox', id: 'audit-health', testid: 'audit-show-health' });
  const action = h('input', {
    type: 'search',
    placeholder: 'e.g. plugin. or batch.',
    testid: 'audit-action',
  });
  const body = h('div', {});
  const older = h('button', { type: 'button', testid: 'audit-older', hidden: true }, 'Older entries');
  /** @type {string | undefined} */
  let cursor;
  /** @param {boolean} append */
  const load = async (append) => {
    const query = new URLSearchParams({ limit: '100' });
    if (!showHealth.checked) query.set('excludeAction', HEALTH_CHECKS);
    if (action.value.trim()) query.set('action', action.value.trim());
    if (append && cursor) query.set('cursor', cursor);
    /** @type {AuditPage} */
    const page = await get(`/audit?${query}`, signal);
    cursor = page.nextCursor;
    older.hidden = !cursor;
    const rows = page.items.map((e) => [
      h('span', { class: 'nowrap' }, formatTime(e.at)),
      h('code', {}, e.actor ?? ''),
      h('code', {}, e.action ?? ''),
      e.target ?? '',
      detailText(e.detail),
    ]);
    const tbody = body.querySelector('tbody');
    if (append && tbody)
      for (const cells of rows)
        tbody.append(
          h(
            'tr',
            {},
            cells.map((c) => h('td', {}, c)),
          ),
        );
    else
      body.replaceChildren(
        table(['When', 'Actor', 'Action', 'Target', 'Detail'], rows, {
          class: 'data',
          testid: 'audit-table',
        }),
      );
  };
  showHealth.addEventListener('change', () => void load(false));
  action.addEventListener('change', () => void load(false));
  older.addEventListener('click', () => void load(true));
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')),
    h('p', { class: 'lede' }, 'Newest first: who trusted, enabled, ran or changed what.'),
    h(
      'div',
      { class: 'row' },
      field('Action starts with', action),
      h('div', { class: 'check' }, showHealth, h('label', { for: 'audit-health' }, 'Show health checks')),
    ),
    body,
    h('div', { class: 'actions' }, older),
  );
  await load(false);
}

/** @param {AuditPage['items'][number]['detail'] | string | null | undefined} detail */
function detailText(detail) {
  if (detail === undefined || detail === null || detail === '') return '';
  const text = typeof detail === 'string' ? detail : JSON.stringify(detail);
  return h('span', { class: 'detail', title: text }, text.length > 300 ? `${text.slice(0, 300)}…` : text);
}
