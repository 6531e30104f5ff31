// @ts-check
// Webhooks (admin): add one (URL, events, plugin, secret — sent once, never
// shown again), edit one (URL, events, active) and rotate its secret with a
// window in which the old one signs too, ping it, remove it; the newest
// deliveries with their state and last answer, each one's body and the
// receiver's answers (webhook-deliveries.js), and a redelivery.
import { del, get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, field, h, nextId, stackedTable, when } from './dom.js';
import { adminOnly } from './session.js';
import { deliveriesCard } from './webhook-deliveries.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'listWebhooks'>[number]} Webhook */
/** @typedef {BodyIn<typeof routes.addWebhook>['events'][number]} EventName */

/** @type {EventName[]} */
const EVENTS = [
  'batch.finished',
  'batch.new-failures',
  'facts.changed',
  'schedule.failed',
  'operation.finished',
];
const HOUR = 3_600_000;
/** How long a rotated secret signs too (the api's default is 24 hours). */
const WINDOWS = [
  ['24 hours', String(24 * HOUR)],
  ['1 hour', String(HOUR)],
  ['7 days', String(7 * 24 * HOUR)],
  ['not at all', '0'],
];

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
      'Signed HTTP notices of finished batches, new failures, changed facts, failed schedule runs and finished operations.',
    ),
  );
  if (!(await adminOnly(container, signal))) return;
  /** @type {[AnswerOf<'listWebhooks'>, AnswerOf<'listDeliveries'>, AnswerOf<'listPlugins'>]} */
  const [hooks, deliveries, plugins] = await Promise.all([
    get('/webhooks', signal),
    get('/webhooks/deliveries', signal),
    get('/plugins', signal),
  ]);
  const editor = h('div', { testid: 'webhook-editor' });
  const errors = errorBox('webhooks-error');
  container.append(
    addForm(plugins.map((plugin) => plugin.id)),
    editor,
    errors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'webhooks-title' },
      h('h2', { id: 'webhooks-title' }, `Webhooks (${hooks.length})`),
      stackedTable(
        ['Webhook', 'Events', 'State', 'Created', 'Action'],
        hooks.map((hook) => hookRow(hook, errors, editor)),
        { testid: 'webhooks-table' },
      ),
    ),
    deliveriesCard(deliveries),
  );
}

/**
 * @param {Webhook} hook
 * @param {import('./dom.js').ErrorBox} errors
 * @param {HTMLElement} editor where the edit form opens
 */
function hookRow(hook, errors, editor) {
  const id = encodeURIComponent(hook.id);
  const edit = h('button', { type: 'button', testid: `webhook-edit-${hook.id}` }, 'Edit');
  edit.addEventListener('click', () => {
    editor.replaceChildren(editForm(hook));
    editor.querySelector('input')?.focus();
  });
  const ping = h('button', { type: 'button', testid: `webhook-ping-${hook.id}` }, 'Ping');
  ping.addEventListener('click', () =>
    busy(ping, errors, async () => {
      /** @type {AnswerOf<'pingWebhook'>} */
      const queued = await post(`/webhooks/${id}/ping`, {});
      flash(`Ping queued as delivery ${queued.deliveryId}.`);
      rerender();
    }),
  );
  const remove = h('button', { type: 'button', testid: `webhook-remove-${hook.id}` }, 'Remove');
  remove.addEventListener('click', () =>
    busy(remove, errors, async () => {
      await del(`/webhooks/${id}`);
      flash(`Removed webhook ${hook.id}.`);
      rerender();
    }),
  );
  return [
    h(
      'span',
      { class: 'cell-stack' },
      h('code', { class: 'id' }, hook.id),
      h('span', { class: 'detail' }, hook.url),
      hook.pluginId ? h('span', { class: 'sub' }, `only ${hook.pluginId}`) : null,
    ),
    h(
      'span',
      { class: 'cell-stack' },
      hook.events.map((event) => h('span', { class: 'nowrap' }, event)),
    ),
    h(
      'span',
      {},
      badge(hook.active ? 'active' : 'inactive', `webhook-state-${hook.id}`),
      hook.previousSecretUntil
        ? h('span', { class: 'hint' }, 'old secret valid until ', when(hook.previousSecretUntil))
        : null,
    ),
    h('span', {}, when(hook.createdAt), h('span', { class: 'sub' }, hook.createdBy)),
    h('span', { class: 'actions wrap' }, edit, ping, remove),
  ];
}

/**
 * One checkbox per event, those in `checked` ticked.
 * @param {string} prefix test id prefix
 * @param {readonly string[]} checked
 */
function eventBoxes(prefix, checked) {
  const boxes = EVENTS.map((event) => {
    const box = h('input', {
      type: 'checkbox',
      id: nextId('event'),
      value: event,
      checked: checked.includes(event),
      testid: `${prefix}-event-${event}`,
    });
    return { event, box };
  });
  const fieldset = h(
    'fieldset',
    {},
    h('legend', {}, 'Events'),
    boxes.map(({ event, box }) => h('div', { class: 'check' }, box, h('label', { for: box.id }, event))),
  );
  /** @returns {EventName[]} */
  const chosen = () => boxes.filter(({ box }) => box.checked).map(({ event }) => event);
  return { fieldset, chosen };
}

/** @param {string[]} pluginIds */
function addForm(pluginIds) {
  const errors = errorBox('webhook-add-error');
  const url = h('input', {
    type: 'text',
    required: true,
    inputmode: 'url',
    testid: 'webhook-url',
    placeholder: 'https://ci.example/hook',
  });
  const events = eventBoxes('webhook-add', ['batch.finished']);
  const plugin = h(
    'select',
    { testid: 'webhook-plugin' },
    h('option', { value: '' }, 'every plugin'),
    pluginIds.map((id) => h('option', { value: id }, id)),
  );
  const secret = h('input', {
    type: 'password',
    required: true,
    autocomplete: 'new-password',
    testid: 'webhook-secret',
  });
  const button = h('button', { type: 'submit', class: 'primary', testid: 'webhook-add' }, 'Add webhook');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'webhook-add-title' },
    h('h2', { id: 'webhook-add-title' }, 'Add a webhook'),
    h(
      'div',
      { class: 'row' },
      field('URL', url, 'http:// or https://, without user:pass@.'),
      field('Only the events of', plugin),
      field('Signing secret', secret, 'Each delivery carries X-Switchyard-Signature-256; never shown again.'),
    ),
    events.fieldset,
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    /** @type {BodyIn<typeof routes.addWebhook>} */
    const body = { url: url.value.trim(), events: events.chosen(), secret: secret.value };
    if (plugin.value) body.pluginId = plugin.value;
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'addWebhook'>} */
      const created = await post('/webhooks', body);
      flash(`Added webhook ${created.id}.`);
      rerender();
    });
  });
  return form;
}

/** @param {Webhook} hook */
function editForm(hook) {
  const errors = errorBox('webhook-edit-error');
  const url = h('input', { type: 'text', required: true, value: hook.url, testid: 'webhook-edit-url' });
  const events = eventBoxes('webhook-edit', hook.events);
  const active = h('input', {
    type: 'checkbox',
    id: nextId('active'),
    checked: hook.active,
    testid: 'webhook-edit-active',
  });
  const secret = h('input', {
    type: 'password',
    autocomplete: 'new-password',
    testid: 'webhook-edit-secret',
  });
  const window = h(
    'select',
    { testid: 'webhook-edit-window' },
    WINDOWS.map(([label, value]) => h('option', { value }, label)),
  );
  const button = h('button', { type: 'submit', class: 'primary', testid: 'webhook-save' }, 'Save');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'webhook-edit-title' },
    h('h2', { id: 'webhook-edit-title' }, 'Edit webhook ', h('code', { class: 'id' }, hook.id)),
    h('div', { class: 'row' }, field('URL', url)),
    events.fieldset,
    h('div', { class: 'check' }, active, h('label', { for: active.id }, 'Active: deliver new events')),
    h(
      'div',
      { class: 'row' },
      field('New signing secret', secret, 'Empty keeps the secret.'),
      field('Old secret still valid for', window, 'It signs too, in X-Switchyard-Signature-256-Previous.'),
    ),
    h('div', { class: 'actions' }, button, cancel),
    errors.el,
  );
  cancel.addEventListener('click', () => form.remove());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const path = `/webhooks/${encodeURIComponent(hook.id)}`;
    void busy(button, errors, async () => {
      await post(path, { url: url.value.trim(), events: events.chosen(), active: active.checked });
      if (secret.value)
        await post(`${path}/secret`, { secret: secret.value, previousValidForMs: Number(window.value) });
      flash(`Saved webhook ${hook.id}${secret.value ? ' and its new secret' : ''}.`);
      rerender();
    });
  });
  return form;
}
