// docs/PROTOCOL.md §10: what is stripped from plugin stderr, every stored error,
// audit details and API problem bodies before it reaches Redis, a log or a
// screen. The patterns are in secret-patterns.ts; this module adds the literal
// values of the host's own secrets, which a process registers as it learns them.
import { hasHiddenCharacters, hasStringSequence, textView, type ViewOptions } from './control-sequences.js';
import { PATTERNS, REDACTED, SECRET_ENV_NAME, type Replacement } from './secret-patterns.js';

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
 * The views of a text that redaction matches. The first is what a terminal
 * shows (string sequences gone, payload and all) and what a text with a secret
 * is stored as; the others keep the payloads, which a terminal hides but which
 * are stored with a text that has no secret, so a reader would see a secret in
 * them. A payload's introducer and terminator become a space (a token right
 * after `ESC P` starts a word) or nothing (a token cut in two by one is whole).
 */
const SHOWN: ViewOptions = { payload: false, introducer: 'join', terminator: 'join' };
const WITH_PAYLOADS: ViewOptions[] = [
  { payload: true, introducer: 'separate', terminator: 'separate' },
  { payload: true, introducer: 'join', terminator: 'join' },
  { payload: true, introducer: 'separate', terminator: 'join' },
  { payload: true, introducer: 'join', terminator: 'separate' },
];

/**
 * `text` with every secret replaced by `[REDACTED]`. A text with control
 * sequences or invisible characters is matched in several views (without them;
 * with string sequences' payloads kept), so that neither a colour code, a
 * payload nor a zero-width space hides a secret. When a view finds one, what
 * comes back is the text as a terminal shows it (without control sequences,
 * payloads and invisible characters), each secret found in any view replaced;
 * a text without secrets comes back with its control sequences as they were.
 */
export function redact(text: string): string {
  registerEnvOnce();
  if (!hasHiddenCharacters(text)) return redactPlain(text);
  const shown = textView(text, SHOWN);
  const views = [
    shown,
    ...(hasStringSequence(text) ? WITH_PAYLOADS.map((options) => textView(text, options)) : []),
  ];
  const redacted = new Uint8Array(text.length);
  let found = false;
  for (const view of views) {
    for (const [start, end] of redactedSpans(view.text)) {
      found = true;
      // The whole stretch of the original, control sequences in it included.
      redacted.fill(1, view.origin[start], (view.origin[end - 1] ?? 0) + 1);
    }
  }
  if (!found) return redactPlain(text);
  const isShown = new Uint8Array(text.length);
  for (const at of shown.origin) isShown[at] = 1;
  const parts: string[] = [];
  let inSecret = false;
  let from = -1;
  for (let at = 0; at <= text.length; at++) {
    const keep = at < text.length && isShown[at] === 1 && redacted[at] === 0;
    if (keep && from < 0) from = at;
    if (!keep && from >= 0) {
      parts.push(text.slice(from, at));
      from = -1;
      inSecret = false;
    }
    if (at < text.length && redacted[at] === 1 && !inSecret) {
      parts.push(REDACTED);
      inSecret = true;
    }
  }
  // Once more as plain text, so that redacting the result changes nothing.
  return redactPlain(parts.join(''));
}

function registerEnvOnce(): void {
  if (envRegistered) return;
  envRegistered = true;
  registerEnvSecrets();
}

/**
 * Whether redact() could change any of `texts`, with one scan of them all
 * joined by line breaks instead of one per text (a plugin's result has
 * dozens): false is certain, true may be a false alarm (a match across two
 * of them), and then each is redacted on its own. A line break is neither a
 * word character nor part of any value the patterns take, so at a text's
 * edges every pattern sees what it sees at the start or end of a string.
 */
export function mayHoldSecret(texts: readonly string[]): boolean {
  registerEnvOnce();
  const text = texts.join('\n');
  if (hasHiddenCharacters(text)) return true;
  for (const secret of sortedSecrets) if (text.includes(secret)) return true;
  for (const [pattern, , needs] of PATTERNS) {
    if (needs && !text.includes(needs)) continue;
    // search(), not test(): it starts at 0 whatever the global pattern's lastIndex.
    if (text.search(pattern) !== -1) return true;
  }
  return false;
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

/** One replacement redactPlain makes: where, how long, and with what. */
interface Edit {
  readonly at: number;
  readonly length: number;
  readonly replacement: string;
}

/**
 * The stretches of `text` that redactPlain replaces, as [start, end) indices
 * into `text`: the same literal secrets and patterns, applied in turn, each
 * replacement's kept parts (a name, a separator, a scheme) told apart from what
 * it redacts.
 */
function redactedSpans(text: string): [number, number][] {
  let current = text;
  let origin = new Int32Array(text.length);
  for (let at = 0; at < text.length; at++) origin[at] = at;
  const spans: [number, number][] = [];

  const apply = (edits: Edit[]) => {
    if (edits.length === 0) return;
    const pieces: string[] = [];
    const grown = edits.reduce((sum, edit) => sum + edit.replacement.length - edit.length, 0);
    const next = new Int32Array(current.length + grown);
    let length = 0;
    let last = 0;
    const copy = (from: number, to: number) => {
      pieces.push(current.slice(from, to));
      next.set(origin.subarray(from, to), length);
      length += to - from;
    };
    for (const { at, length: matched, replacement } of edits) {
      copy(last, at);
      last = at + matched;
      const match = current.slice(at, last);
      const [head, tail] = keptParts(match, replacement);
      copy(at, at + head);
      // What is replaced, as a stretch of the original text.
      let first = -1;
      let end = -1;
      for (const source of origin.subarray(at + head, last - tail)) {
        if (source < 0) continue;
        if (first < 0) first = source;
        end = source + 1;
      }
      if (first >= 0) spans.push([first, end]);
      const middle = replacement.slice(head, replacement.length - tail);
      pieces.push(middle);
      next.fill(-1, length, length + middle.length);
      length += middle.length;
      copy(last - tail, last);
    }
    copy(last, current.length);
    current = pieces.join('');
    origin = next.subarray(0, length);
  };

  for (const secret of sortedSecrets) {
    const edits: Edit[] = [];
    for (let at = current.indexOf(secret); at >= 0; at = current.indexOf(secret, at + secret.length)) {
      edits.push({ at, length: secret.length, replacement: REDACTED });
    }
    apply(edits);
  }
  for (const [pattern, replacement, needs] of PATTERNS) {
    if (needs && !current.includes(needs)) continue;
    const edits: Edit[] = [];
    for (const match of current.matchAll(pattern)) {
      const replaced = replacementFor(replacement, match, current);
      if (replaced !== match[0])
        edits.push({ at: match.index, length: match[0].length, replacement: replaced });
    }
    apply(edits);
  }
  return spans;
}

/** What String.prototype.replace would put in place of `match`. */
function replacementFor(replacement: Replacement, match: RegExpExecArray, input: string): string {
  if (typeof replacement === 'function') {
    return replacement(match[0], ...(match.slice(1) as string[]), String(match.index), input);
  }
  return replacement.replace(/\$(\d)/g, (_ref, group: string) => match[Number(group)] ?? '');
}

/**
 * How many characters at the start and at the end of `match` its replacement
 * keeps: the text around `[REDACTED]` when the match has it at both ends, else
 * what the two have in common.
 */
function keptParts(match: string, replacement: string): [number, number] {
  const at = replacement.lastIndexOf(REDACTED);
  if (at >= 0) {
    const head = replacement.slice(0, at);
    const tail = replacement.slice(at + REDACTED.length);
    if (head.length + tail.length <= match.length && match.startsWith(head) && match.endsWith(tail)) {
      return [head.length, tail.length];
    }
  }
  const most = Math.min(match.length, replacement.length);
  let head = 0;
  while (head < most && match[head] === replacement[head]) head++;
  let tail = 0;
  while (tail < most - head && match[match.length - 1 - tail] === replacement[replacement.length - 1 - tail])
    tail++;
  return [head, tail];
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

/**
 * A webhook URL as a non-admin reads it (the audit log): every query value,
 * any user:pass@ and the fragment become [REDACTED]; the scheme, host, path
 * and query names stay, so the reader still sees where it goes.
 */
export function webhookUrlForViewer(url: string): string {
  const parts = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(url);
  if (!parts) return REDACTED;
  const [, scheme = '', authority = '', path = '', query, fragment] = parts;
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? `${REDACTED}@${authority.slice(at + 1)}` : authority;
  const names = query
    ?.slice(1)
    .split('&')
    .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=${REDACTED}` : REDACTED));
  return `${scheme}${host}${path}${names ? `?${names.join('&')}` : ''}${fragment ? `#${REDACTED}` : ''}`;
}
