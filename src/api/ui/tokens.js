// @ts-check
// Tokens (admin): list with role, expiry and last use; create (the secret is
// shown once, here, and never again); revoke.
import { del, get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, field, h, table, when } from './dom.js';
import { adminOnly } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {BodyIn<typeof routes.createToken>} NewToken */

const DAY = 86_400_000;
const EXPIRY = [
  ['never', ''],
  ['1 day', String(DAY)],
  ['7 days', String(7 * DAY)],
  ['30 days', String(30 * DAY)],
  ['90 days', String(90 * DAY)],
  ['1 year', String(365 * DAY)],
];

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function tokensView(container, { signal }) {
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Tokens')),
    h(
      'p',
      { class: 'lede' },
      'API tokens for people and automation. The role decides what a token may do; the audit names the token.',
    ),
  );
  if (!(await adminOnly(container, signal))) return;
  /** @type {AnswerOf<'listTokens'>} */
  const tokens = await get('/tokens', signal);
  const listErrors = errorBox('tokens-error');
  const now = Date.now();
  container.append(
    createForm(),
    listErrors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tokens-list-title' },
      h('h2', { id: 'tokens-list-title' }, `Tokens (${tokens.length})`),
      table(
        ['Name', 'Role', 'Created', 'Expires', 'Last used', 'Action'],
        tokens.map((item) => {
          const button = h('button', { type: 'button', testid: `token-revoke-${item.name}` }, 'Revoke');
          button.addEventListener('click', () =>
            busy(button, listErrors, async () => {
              await del(`/tokens/${encodeURIComponent(item.id)}`);
              flash(`Revoked token ${item.name}.`);
              rerender();
            }),
          );
          const expired = item.expiresAt && Date.parse(item.expiresAt) <= now;
          return [
            h('span', {}, item.name, h('span', { class: 'sub' }, item.id)),
            item.role,
            h('span', {}, when(item.createdAt), h('span', { class: 'sub' }, item.createdBy)),
            item.expiresAt
              ? h('span', {}, when(item.expiresAt), expired ? [' ', badge('expired')] : null)
              : 'never',
            item.lastUsedAt ? when(item.lastUsedAt) : 'never',
            button,
          ];
        }),
        { testid: 'tokens-table', class: 'data' },
      ),
    ),
  );
}

function createForm() {
  const errors = errorBox('token-create-error');
  const name = h('input', { type: 'text', required: true, testid: 'token-name', placeholder: 'alice' });
  const role = h(
    'select',
    { testid: 'token-role' },
    ['viewer', 'operator', 'admin'].map((value) => h('option', { value }, value)),
  );
  const expires = h(
    'select',
    { testid: 'token-expires' },
    EXPIRY.map(([label, value]) => h('option', { value }, label)),
  );
  const secret = h('div', { testid: 'token-secret-box', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary', testid: 'token-create' }, 'Create token');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'token-create-title' },
    h('h2', { id: 'token-create-title' }, 'Create a token'),
    h('div', { class: 'row' }, field('Name', name), field('Role', role), field('Expires after', expires)),
    h('div', { class: 'actions' }, button),
    errors.el,
    secret,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    /** @type {NewToken} */
    const body = {
      name: name.value.trim(),
      role: /** @type {NewToken['role']} */ (role.value),
    };
    if (expires.value) body.expiresInMs = Number(expires.value);
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'createToken'>} */
      const created = await post('/tokens', body);
      // Shown once: the api keeps only a hash. Not flashed (that would survive a re-render).
      secret.replaceChildren(
        h(
          'div',
          { class: 'alert alert-warn', role: 'status' },
          h('p', {}, `Token ${created.name} (${created.role}) — copy it now; it is not shown again:`),
          h('code', { class: 'mono secret', testid: 'token-secret' }, created.token),
        ),
      );
      secret.hidden = false;
      name.value = '';
    });
  });
  return form;
}
