// @ts-check
// The Webhooks page's deliveries: the newest with their state and last
// answer; one opened shows the body exactly as signed and sent and each
// attempt with the receiver's status, headers and the start of its body (kept
// small and escaped by the api); a delivered or failed one can be sent again.
import { get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, h, pretty, stackedTable, when } from './dom.js';

/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'listDeliveries'>[number]} Delivery */
/** @typedef {AnswerOf<'showDelivery'>} DeliveryRecord */

/** @param {Delivery[]} deliveries */
export function deliveriesCard(deliveries) {
  const errors = errorBox('deliveries-error');
  const detail = h('div', { testid: 'delivery-detail-box' });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'deliveries-title' },
    h('h2', { id: 'deliveries-title' }, `Newest deliveries (${deliveries.length})`),
    errors.el,
    stackedTable(
      ['Delivery', 'Event', 'State', 'Last answer', 'Created', 'Action'],
      deliveries.map((delivery) => deliveryRow(delivery, errors, detail)),
      { testid: 'deliveries-table' },
    ),
    detail,
  );
}

/**
 * @param {Delivery} delivery
 * @param {import('./dom.js').ErrorBox} errors
 * @param {HTMLElement} detail where an opened delivery is shown
 */
function deliveryRow(delivery, errors, detail) {
  const id = encodeURIComponent(delivery.deliveryId);
  const show = h('button', { type: 'button', testid: `delivery-show-${delivery.deliveryId}` }, 'Show');
  show.addEventListener('click', () =>
    busy(show, errors, async () => {
      /** @type {DeliveryRecord} */
      const record = await get(`/webhooks/deliveries/${id}`);
      detail.replaceChildren(deliveryDetail(record));
      detail.scrollIntoView({ block: 'nearest' });
    }),
  );
  const again = h(
    'button',
    { type: 'button', testid: `delivery-redeliver-${delivery.deliveryId}` },
    'Redeliver',
  );
  again.disabled = delivery.state === 'pending' || delivery.state === 'retrying';
  again.addEventListener('click', () =>
    busy(again, errors, async () => {
      /** @type {AnswerOf<'redeliverDelivery'>} */
      const queued = await post(`/webhooks/deliveries/${id}/redeliver`, {});
      flash(`Redelivery queued as delivery ${queued.deliveryId}.`);
      rerender();
    }),
  );
  return [
    h(
      'span',
      { class: 'cell-stack' },
      h('code', { class: 'id' }, delivery.deliveryId),
      h(
        'span',
        { class: 'sub' },
        delivery.redeliveryOf ? `again of ${delivery.redeliveryOf}` : delivery.webhookId,
      ),
    ),
    delivery.event,
    badge(delivery.state, `delivery-state-${delivery.deliveryId}`),
    h('span', { class: 'detail' }, lastAnswer(delivery)),
    when(delivery.createdAt),
    h('span', { class: 'actions wrap' }, show, again),
  ];
}

/** @param {Delivery} delivery */
function lastAnswer(delivery) {
  const last = delivery.attempts.at(-1);
  if (!last) return '—';
  const status = last.statusCode !== undefined ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer');
  const excerpt = last.response?.body.replace(/\s+/g, ' ').trim().slice(0, 60);
  return `${status} in ${last.durationMs} ms${excerpt ? ` — ${excerpt}` : ''}`;
}

/** @param {DeliveryRecord} record */
function deliveryDetail(record) {
  let body = record.body;
  try {
    body = pretty(JSON.parse(record.body));
  } catch {
    // shown as sent
  }
  return h(
    'article',
    { class: 'delivery-detail', testid: 'delivery-detail', 'aria-label': `Delivery ${record.deliveryId}` },
    h('h3', {}, 'Delivery ', h('code', { class: 'id' }, record.deliveryId)),
    h('p', { class: 'hint' }, `${record.event} to `, h('span', { class: 'detail' }, record.url)),
    h('h4', {}, 'Body, as signed and sent'),
    h('pre', { class: 'json wrap', testid: 'delivery-body' }, body),
    h('h4', {}, `Attempts (${record.attempts.length})`),
    record.attempts.length === 0
      ? h('p', { class: 'muted' }, 'None yet: a worker sends it.')
      : h(
          'ol',
          { class: 'attempts' },
          record.attempts.map((attempt, index) => attemptItem(attempt, index)),
        ),
  );
}

/**
 * @param {DeliveryRecord['attempts'][number]} attempt
 * @param {number} index
 */
function attemptItem(attempt, index) {
  const answer = attempt.response;
  const headers = answer ? Object.entries(answer.headers) : [];
  return h(
    'li',
    { testid: `delivery-attempt-${index + 1}` },
    h(
      'p',
      {},
      h('strong', {}, attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : 'no answer'),
      ` in ${attempt.durationMs} ms, `,
      when(attempt.at),
      attempt.error ? h('span', { class: 'detail' }, ` — ${attempt.error}`) : null,
    ),
    headers.length > 0
      ? h(
          'dl',
          { class: 'facts' },
          headers.map(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
        )
      : null,
    answer && answer.body !== ''
      ? h(
          'pre',
          { class: 'json wrap', testid: `delivery-answer-${index + 1}` },
          answer.body,
          answer.truncated ? h('span', { class: 'muted' }, '\n… (the start only)') : null,
        )
      : null,
  );
}
