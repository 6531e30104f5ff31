// docs/PROTOCOL.md §10: what is stripped from plugin stderr, every stored error,
// audit details and API problem bodies before it reaches Redis, a log or a
// screen. The patterns are in secret-patterns.ts; this module adds the literal
// values of the host's own secrets, which a process registers as it learns them.
import { hasControlCharacters, withoutControlSequences } from './control-sequences.js';
import { PATTERNS, REDACTED, SECRET_ENV_NAME } from './secret-patterns.js';

export { REDACTED };

/** Literal secret values of this host (Redis password, API tokens, configured secrets). */
const hostSecrets = new Set<string>();
let sortedSecrets: string[] = [];
let envRegistered = false;

export function registerSecret(value: string | undefined): void {
  // Very short values would redact ordinary words; they are not secrets worth the noise.
  if (!value || value.length < 6 || hostSecrets.has(value)) return;
  hostSecrets.add(value);
  // Longest first, so a secret that contains another is replaced whole.
  sortedSecrets = [...hostSecrets].sort((a, b) => b.length - a.length);
}

/** Environment variables that hold a working directory, not a secret, though `pwd` is a keyword. */
const NOT_SECRET_ENV = new Set(['PWD', 'OLDPWD']);

/**
 * Registers the values of this process's secret environment variables: every
 * variable whose name ends in a secret keyword (`DB_PASSWORD`, `GITHUB_TOKEN`),
 * and every variable named in SWITCHYARD_REDACT_ENV (comma-separated) whatever
 * its name. Done once, on the first redaction; tests call it with their own env.
 */
export function registerEnvSecrets(env: NodeJS.ProcessEnv = process.env): void {
  const named = new Set(
    (env.SWITCHYARD_REDACT_ENV ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
  for (const [name, value] of Object.entries(env)) {
    if (!value || NOT_SECRET_ENV.has(name)) continue;
    if (named.has(name) || (SECRET_ENV_NAME.test(name) && value.length >= 8)) registerSecret(value);
  }
}

/**
 * `text` with every secret replaced by `[REDACTED]`. Matching happens on the
 * text with control sequences removed (a colour code must not hide a secret);
 * when that finds a secret, the text without them is what comes back, and a
 * text without secrets comes back with its control sequences as they were.
 */
export function redact(text: string): string {
  if (!envRegistered) {
    envRegistered = true;
    registerEnvSecrets();
  }
  if (!hasControlCharacters(text)) return redactPlain(text);
  const plain = withoutControlSequences(text);
  const clean = redactPlain(plain);
  return clean !== plain ? clean : redactPlain(text);
}

function redactPlain(text: string): string {
  let out = text;
  for (const secret of sortedSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement, needs] of PATTERNS) {
    if (needs && !out.includes(needs)) continue;
    out = out.replace(pattern, replacement as (substring: string, ...args: string[]) => string);
  }
  return out;
}

/**
 * Redacts every string inside a JSON-like value (audit details, problem
 * bodies, operation output), keys included; a string under a secret's name
 * (`{"token": "…"}`) is redacted whole.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactDeep(item)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [
        redact(key),
        typeof item === 'string' && item !== '' && SECRET_ENV_NAME.test(key) ? REDACTED : redactDeep(item),
      ]),
    ) as T;
  }
  return value;
}

/** Redacts and bounds a message for storage. */
export function boundedMessage(text: string, maxChars = 1_024): string {
  const clean = redact(text);
  return clean.length <= maxChars ? clean : `${clean.slice(0, maxChars - 1)}…`;
}
