// The shape of the host's API tokens: `sy_<id>_<secret>`, a fixed prefix, a
// 12-character lower-case id and a 43-character base64url secret. The shape is
// fixed so that a token is recognised (and redacted, docs/PROTOCOL.md §10) wherever
// it appears, also by a process that never saw its value.
export const TOKEN_PREFIX = 'sy_';
export const TOKEN_ID_LENGTH = 12;
export const TOKEN_SECRET_LENGTH = 43;

/** A whole presented token; groups: id, secret. */
export const TOKEN_PATTERN = /^sy_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/**
 * A token (or the start of one) inside any text: the prefix, the id and at
 * least 8 characters of the secret, so a truncated token is redacted too.
 */
export const TOKEN_IN_TEXT = /(?<![A-Za-z0-9])sy_[a-z0-9]{12}_[A-Za-z0-9_-]{8,}/g;

export function formatToken(id: string, secret: string): string {
  return `${TOKEN_PREFIX}${id}_${secret}`;
}
