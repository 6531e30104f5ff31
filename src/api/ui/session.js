// @ts-check
// Who is signed in: the token's name and role from GET /api/v1/me, asked once
// per sign-in, so admin-only pages, links and actions show only for admins.
import { get } from './api.js';
import { h } from './dom.js';

/** @typedef {import('../../core/contract/index.js').AnswerOf<'me'>} Me */
/** @typedef {Me['role']} Role */

/** @type {Me | undefined} */
let me;

/**
 * @param {AbortSignal} [signal]
 * @returns {Promise<Me>}
 */
export async function currentUser(signal) {
  me ??= /** @type {Me} */ (await get('/me', signal));
  return me;
}

export function forgetUser() {
  me = undefined;
}

/**
 * True for an admin; otherwise says the page is for admins and returns false.
 * @param {HTMLElement} container
 * @param {AbortSignal} [signal]
 */
export async function adminOnly(container, signal) {
  const user = await currentUser(signal);
  if (user.role === 'admin') return true;
  container.append(
    h(
      'p',
      { class: 'notice', role: 'status', testid: 'admin-only' },
      `This page needs the admin role; token ${user.name} has ${user.role}.`,
    ),
  );
  return false;
}

/** @type {Record<Role, number>} */
const RANK = { viewer: 0, operator: 1, admin: 2 };

/**
 * True when the user's role includes `needed` (viewer < operator < admin), as the api decides.
 * @param {Me | null | undefined} user
 * @param {Role} needed
 */
export function can(user, needed) {
  return (user ? RANK[user.role] : -1) >= RANK[needed];
}

/**
 * In place of an action the token may not take: which role it needs and which the token has.
 * @param {Me} user
 * @param {Role} needed
 * @param {string} action
 * @param {string} [testid]
 */
export function needsRole(user, needed, action, testid) {
  return h(
    'p',
    { class: 'notice', role: 'note', testid },
    `${action} needs the ${needed} role; token ${user.name} has ${user.role}.`,
  );
}

/**
 * The fair queue's class of new work (docs/CLI.md "Fair share"): high is offered only to an admin, as the api allows.
 * @param {Me} user
 * @param {string} testid
 * @returns {HTMLSelectElement}
 */
export function prioritySelect(user, testid) {
  return /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { testid },
      h('option', { value: 'normal', selected: true }, 'normal'),
      h('option', { value: 'low' }, 'low: after normal work'),
      can(user, 'admin') ? h('option', { value: 'high' }, 'high: before normal work (admin)') : null,
    )
  );
}
