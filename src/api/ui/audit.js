// @ts-check
// Audit: the newest entries, filtered, a page at a time. Health checks write an
// entry per run and would bury everything else: hidden unless asked for.
import { get } from './api.js';
import { errorBox, field, h, table, when } from './dom.js';

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
  const actor = h('input', {
    type: 'search',
    placeholder: 'token:ci or user:ana@host',
    testid: 'audit-actor',
  });
  const target = h('input', {
    type: 'search',
    placeholder: 'an id: op_…, fixture-inspector',
    testid: 'audit-target',
  });
  // Local date and time, as the table shows them; sent as a look-back and an ISO time.
  const since = h('input', { type: 'datetime-local', step: '1', testid: 'audit-since' });
  const until = h('input', { type: 'datetime-local', step: '1', testid: 'audit-until' });
  const errors = errorBox('audit-error');
  const body = h('div', {});
  const older = h('button', { type: 'button', testid: 'audit-older', hidden: true }, 'Older entries');
  /** @type {string | undefined} */
  let cursor;
  /** @param {boolean} append */
  const load = async (append) => {
    const query = new URLSearchParams({ limit: '100' });
    if (!showHealth.checked) query.set('excludeAction', HEALTH_CHECKS);
    if (action.value.trim()) query.set('action', action.value.trim());
    if (actor.value.trim()) query.set('actor', actor.value.trim());
    if (target.value.trim()) query.set('target', target.value.trim());
    const from = since.value ? new Date(since.value).getTime() : Number.NaN;
    // `since` is a look-back in ms: a time in the future selects nothing newer than now, so 1 ms.
    if (Number.isFinite(from)) query.set('since', String(Math.max(1, Date.now() - from)));
    const to = until.value ? new Date(until.value).getTime() : Number.NaN;
    if (Number.isFinite(to)) query.set('until', new Date(to + 999).toISOString());
    if (append && cursor) query.set('cursor', cursor);
    /** @type {AuditPage} */
    let page;
    try {
      page = await get(`/audit?${query}`, signal);
      errors.clear();
    } catch (error) {
      errors.show(error);
      return;
    }
    cursor = page.nextCursor;
    older.hidden = !cursor;
    const rows = page.items.map((e) => [
      when(e.at),
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
  for (const control of [showHealth, action, actor, target, since, until])
    control.addEventListener('change', () => void load(false));
  older.addEventListener('click', () => void load(true));
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')),
    h('p', { class: 'lede' }, 'Newest first: who trusted, enabled, ran or changed what.'),
    h(
      'div',
      { class: 'row filters', testid: 'audit-filters' },
      field('Action or kind', action),
      field('Actor', actor),
      field('Target', target),
      field('Since (local time)', since),
      field('Until (local time)', until),
      h('div', { class: 'check' }, showHealth, h('label', { for: 'audit-health' }, 'Show health checks')),
    ),
    errors.el,
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
