// Who is signed in: the token's name and role from GET /api/v1/me, asked once
// per sign-in, so admin-only pages, links and actions show only for admins.
import { get } from './api.js';
import { h } from './dom.js';

let me;

export async function currentUser(signal) {
  me ??= await get('/me', signal);
  return me;
}

export function forgetUser() {
  me = undefined;
}

/** True for an admin; otherwise says the page is for admins and returns false. */
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

const RANK = { viewer: 0, operator: 1, admin: 2 };

/** True when the user's role includes `needed` (viewer < operator < admin), as the api decides. */
export function can(user, needed) {
  return (RANK[user?.role] ?? -1) >= RANK[needed];
}

/** In place of an action the token may not take: which role it needs and which the token has. */
export function needsRole(user, needed, action, testid) {
  return h(
    'p',
    { class: 'notice', role: 'note', testid },
    `${action} needs the ${needed} role; token ${user.name} has ${user.role}.`,
  );
}
