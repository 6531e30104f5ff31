// @ts-check
// Switchyard review UI: sign-in, hash routing, and the shell around each view.
import { get, getToken, setToken, setUnauthorizedHandler } from './api.js';
import { auditView } from './audit.js';
import { queueView } from './queue.js';
import { newRolloutView, rolloutView, rolloutsView } from './rollouts.js';
import { batchView, batchesView } from './batches.js';
import { byId, errorBox, field, h } from './dom.js';
import { operationView, operationsView } from './operations.js';
import { fleetView, fleetsView } from './fleet.js';
import { pluginView, pluginsView } from './plugins.js';
import { projectView } from './project-page.js';
import { projectsView } from './projects.js';
import { navigate, setRenderer, takeFlash } from './router.js';
import { schedulesView } from './schedules.js';
import { currentUser, forgetUser } from './session.js';
import { tokensView } from './tokens.js';
import { webhooksView } from './webhooks.js';

/** @import { ViewContext } from './router.js' */
/** @typedef {(container: HTMLElement, context: ViewContext) => Promise<unknown>} View */

/** @type {[RegExp, View][]} */
const ROUTES = [
  [/^\/plugins$/, pluginsView],
  [/^\/plugins\/([^/]+)$/, pluginView],
  [/^\/plugins\/([^/]+)\/fleet$/, fleetView],
  [/^\/fleet$/, fleetsView],
  [/^\/projects$/, projectsView],
  [/^\/projects\/([^/]+)$/, projectView],
  [/^\/batches$/, batchesView],
  [/^\/batches\/([^/]+)$/, batchView],
  [/^\/rollouts$/, rolloutsView],
  [/^\/rollouts\/new$/, newRolloutView],
  [/^\/rollouts\/([^/]+)$/, rolloutView],
  [/^\/operations$/, operationsView],
  [/^\/operations\/([^/]+)$/, operationView],
  [/^\/audit$/, auditView],
  [/^\/queue$/, queueView],
  [/^\/schedules$/, schedulesView],
  [/^\/tokens$/, tokensView],
  [/^\/webhooks$/, webhooksView],
];

const main = byId('main');
const nav = byId('nav');
const signOutButton = byId('sign-out');
/** @type {{ controller: AbortController } | undefined} */
let current;
/** @type {string | undefined} */
let signInMessage;

/** @param {string} message shown on the sign-in form */
function signOut(message) {
  setToken(null);
  forgetUser();
  signInMessage = message;
  render();
}

setUnauthorizedHandler(() =>
  signOut('The API rejected the token (401): it is unknown, revoked or mistyped. Sign in again.'),
);
signOutButton.addEventListener('click', () => signOut('Signed out.'));
window.addEventListener('hashchange', () => render());

function render() {
  current?.controller.abort();
  const controller = new AbortController();
  current = { controller };
  const container = h('div', { class: 'view' });
  main.replaceChildren(container);

  if (!getToken()) {
    nav.hidden = true;
    signOutButton.hidden = true;
    renderSignIn(container);
    return;
  }
  nav.hidden = false;
  signOutButton.hidden = false;
  // Admin-only links (Schedules, Tokens) appear once the token's role is known.
  currentUser(controller.signal)
    .then((user) => {
      const adminLinks = /** @type {NodeListOf<HTMLElement>} */ (nav.querySelectorAll('[data-admin]'));
      for (const link of adminLinks) link.hidden = user.role !== 'admin';
    })
    .catch(() => {});

  // The query is split off before decoding: a filter in it may hold an encoded '?'.
  const [route = '', search = ''] = location.hash.replace(/^#/, '').split(/\?(.*)/s);
  const path = decodeURIComponent(route) || '/plugins';
  // A plugin's fleet page is under /plugins/ but belongs to the nav's Fleet.
  const section = /^\/plugins\/[^/]+\/fleet$/.test(path) ? '/fleet' : path;
  for (const link of nav.querySelectorAll('a')) {
    if (section.startsWith(`/${link.dataset.route}`)) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const flashText = takeFlash();
  if (flashText) container.append(h('p', { class: 'flash', role: 'status', testid: 'flash' }, flashText));
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(path);
    if (match) {
      const ctx = { signal: controller.signal, params: match.slice(1), query: new URLSearchParams(search) };
      Promise.resolve(view(container, ctx)).catch((thrown) => {
        const error = /** @type {{ name?: string, signedOut?: boolean } | null | undefined} */ (thrown);
        if (error?.name === 'AbortError' || error?.signedOut || controller.signal.aborted) return;
        const box = errorBox('view-error');
        box.show(error);
        container.append(box.el);
      });
      return;
    }
  }
  if (path === '/' || path === '') return navigate('#/plugins');
  container.append(
    h('h1', {}, 'Not found'),
    h('p', {}, 'No page at this address. ', h('a', { href: '#/plugins' }, 'Go to plugins')),
  );
}

/** @param {HTMLElement} container */
function renderSignIn(container) {
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    testid: 'token-input',
  });
  const errors = errorBox('sign-in-error');
  const button = h('button', { type: 'submit', class: 'primary', testid: 'sign-in' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in to Switchyard'),
    signInMessage
      ? h('p', { class: 'notice', role: 'status', testid: 'sign-in-message' }, signInMessage)
      : null,
    field(
      'API token',
      input,
      'The first start of the api writes an admin token to <data-dir>/api-token. ' +
        'It is kept for this browser tab only (sessionStorage) and sent as a Bearer header.',
    ),
    errors.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    errors.clear();
    button.disabled = true;
    setToken(token);
    try {
      await get('/plugins');
      signInMessage = undefined;
      if (!location.hash || location.hash === '#/' || location.hash === '#') navigate('#/plugins');
      else render();
    } catch (error) {
      if (!(/** @type {{ signedOut?: boolean } | null | undefined} */ (error)?.signedOut)) {
        setToken(null);
        errors.show(error);
      }
      button.disabled = false;
    }
  });
  container.append(form);
  input.focus();
}

setRenderer(render);
render();
