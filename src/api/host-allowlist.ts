// DNS rebinding: a page on evil.example whose name the attacker re-points at
// this api's address makes the victim's browser send it same-origin requests
// with `Host: evil.example`. The /api/v1 routes need a bearer token that page
// does not have; /healthz and /metrics need none, so they answer only a Host
// that names this api: an IP literal (a browser sends one only for a page
// served from that very address), a loopback name, the address the api binds,
// or a name the administrator allowed (`--allowed-host`).
import { isIP } from 'node:net';

/** The hostname of a Host header (`name:port`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(host);
  if (bracketed) return bracketed[1]!.toLowerCase();
  const plain = /^([^:[\]\s]+)(?::\d+)?$/.exec(host);
  return plain ? plain[1]!.toLowerCase().replace(/\.$/, '') : undefined;
}

/** Whether a request whose Host header is `host` may read the unauthenticated routes. */
export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  const name = hostnameOf(host);
  if (name === undefined) return false;
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return allowed.has(name);
}

/** The names an api accepts besides IP literals and loopback names: its bind host and the allowed ones. */
export function allowedHostNames(bindHost: string | undefined, extra: readonly string[] = []): Set<string> {
  return new Set([...(bindHost ? [bindHost] : []), ...extra].map((name) => name.toLowerCase()));
}
