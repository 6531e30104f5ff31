// Audit: the newest entries.
import { get } from './api.js';
import { formatTime, h, table } from './dom.js';

export async function auditView(container, { signal }) {
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')),
    h('p', { class: 'lede' }, 'Newest first: who trusted, enabled, ran or changed what.'),
  );
  const entries = await get('/audit?limit=200', signal);
  container.append(
    table(
      ['When', 'Actor', 'Action', 'Target', 'Detail'],
      entries.map((e) => [
        h('span', { class: 'nowrap' }, formatTime(e.at)),
        h('code', {}, e.actor ?? ''),
        h('code', {}, e.action ?? ''),
        e.target ?? '',
        detailText(e.detail),
      ]),
      { class: 'data', testid: 'audit-table' },
    ),
  );
}

function detailText(detail) {
  if (detail === undefined || detail === null || detail === '') return '';
  const text = typeof detail === 'string' ? detail : JSON.stringify(detail);
  return h('span', { class: 'detail', title: text }, text.length > 300 ? `${text.slice(0, 300)}…` : text);
}
