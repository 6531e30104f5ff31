// Text that came from a plugin, a package, a project or a user, made safe to
// print on a terminal: control characters (ESC, CR, BS, C1 controls such as
// CSI) and bidi controls (embeddings, overrides, isolates and the marks
// LRM, RLM, ALM) become visible escapes (`\x1b`, `\u202e`), so no such text
// can move the cursor, clear a line, draw over what the host prints or, in a
// terminal that applies bidi, reorder what stands beside it.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_KEEPING_NEWLINES =
  // eslint-disable-next-line no-control-regex -- as above
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character (line breaks too) written as a visible escape. */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/** The same, keeping line breaks: for messages that may span two lines. */
export function escapeControlKeepingLines(text: string): string {
  return text.replace(UNSAFE_KEEPING_NEWLINES, escapeChar);
}

/** Every string inside `value` escaped (for human-readable logs). */
export function escapeControlDeep(value: unknown): unknown {
  if (typeof value === 'string') return escapeControl(value);
  if (Array.isArray(value)) return value.map(escapeControlDeep);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, escapeControlDeep(item)]));
  }
  return value;
}
