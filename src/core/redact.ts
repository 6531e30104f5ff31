// PROTOCOL.md §10: what is stripped from plugin stderr and every stored error
// before it reaches Redis, a log or a screen.
const REDACTED = '[REDACTED]';

const PATTERNS: [RegExp, string][] = [
  [/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, `Bearer ${REDACTED}`],
  // key=value, key: value, "key":"value", and the same inside JSON-escaped text (\"key\":\"value\").
  [
    /\b(password|passwd|pwd|secret|token|api_key|access_key|private_key)(\\?["']?\s*[=:]\s*)(\\?"(?:[^"\\]|\\(?!"))*\\?"|'[^']*'|[^\s,;&"'\\]+)/gi,
    `$1$2${REDACTED}`,
  ],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/:@]*:[^\s/@]*@/gi, `$1${REDACTED}@`],
  [/\bAKIA[0-9A-Z]{16}\b/g, REDACTED],
];

/** Literal secret values of this host (Redis password, API tokens, configured secrets). */
const hostSecrets = new Set<string>();

export function registerSecret(value: string | undefined): void {
  // Very short values would redact ordinary words; they are not secrets worth the noise.
  if (value && value.length >= 6) hostSecrets.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of hostSecrets) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Redacts and bounds a message for storage. */
export function boundedMessage(text: string, maxChars = 1_024): string {
  const clean = redact(text);
  return clean.length <= maxChars ? clean : `${clean.slice(0, maxChars - 1)}…`;
}
