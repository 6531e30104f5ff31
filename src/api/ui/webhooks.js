// @ts-check
// Webhooks (admin): the webhooks (never their secrets; `webhook add` reads the
// secret from a file) with a remove action, and the newest deliveries with
// their state and last answer.
import { del, get } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, h, table, when } from './dom.js';
import { adminOnly } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function webhooksView(container, { signal }) {
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Webhooks')),
    h(
      'p',
      { class: 'lede' },
      'Signed HTTP notices of finished batches, new failures, changed facts, failed schedule runs and finished operations. Add one with switchyard webhook add.',
    ),
  );
  if (!(await adminOnly(container, signal))) return;
  /** @type {[AnswerOf<'listWebhooks'>, AnswerOf<'listDeliveries'>]} */
  const [hooks, deliveries] = await Promise.all([
    get('/webhooks', signal),
    get('/webhooks/deliveries', signal),
  ]);
  const errors = errorBox('webhooks-error');
  container.append(
    errors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'webhooks-title' },
      h('h2', { id: 'webhooks-title' }, `Webhooks (${hooks.length})`),
      table(
        ['ID', 'URL', 'Events', 'Plugin', 'Created', 'Action'],
        hooks.map((hook) => {
          const button = h('button', { type: 'button', testid: `webhook-remove-${hook.id}` }, 'Remove');
          button.addEventListener('click', () =>
            busy(button, errors, async () => {
              await del(`/webhooks/${encodeURIComponent(hook.id)}`);
              flash(`Removed webhook ${hook.id}.`);
              rerender();
            }),
          );
          return [
            h('code', {}, hook.id),
            hook.url,
            hook.events.join(', '),
            hook.pluginId ?? 'every plugin',
            h('span', {}, when(hook.createdAt), ` by ${hook.createdBy}`),
            button,
          ];
        }),
        { testid: 'webhooks-table' },
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'deliveries-title' },
      h('h2', { id: 'deliveries-title' }, `Newest deliveries (${deliveries.length})`),
      table(
        ['Delivery', 'Webhook', 'Event', 'State', 'Attempts', 'Last answer', 'Created'],
        deliveries.map((delivery) => {
          const last = delivery.attempts.at(-1);
          const answer = !last
            ? '—'
            : `${last.statusCode !== undefined ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer')} in ${last.durationMs} ms`;
          return [
            h('code', {}, delivery.deliveryId),
            h('code', {}, delivery.webhookId),
            delivery.event,
            badge(delivery.state, `delivery-state-${delivery.deliveryId}`),
            String(delivery.attempts.length),
            answer,
            when(delivery.createdAt),
          ];
        }),
        { testid: 'deliveries-table' },
      ),
    ),
  );
}
