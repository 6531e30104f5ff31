// Who is signed in: the token's name and role from GET /api/v1/me, asked once
// per sign-in, so admin-only pages and links show only for admins.
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
