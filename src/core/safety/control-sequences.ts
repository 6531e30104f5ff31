// Terminal control sequences and other control characters, removed before
// redaction matches (docs/PROTOCOL.md §10): a colour code between a name and its
// `=`, around a token or inside one must not hide a secret from the patterns.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * One control sequence (ECMA-48), or one other control character:
 * - string sequences (OSC, DCS, SOS, PM, APC), 7-bit or 8-bit introducer, with
 *   their payload, up to BEL, ST or the end of the line;
 * - CSI sequences (`ESC [` or `\x9b`, parameters, intermediates, final byte);
 * - other escapes (`ESC` + intermediates + final byte: `ESC ( B`, `ESC 7`);
 * - a lone C0 or C1 control, DEL, or a carriage return not ending a line
 *   (tab and line feed stay: they separate values).
 */
const SEQUENCE = new RegExp(
  [
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d-\\u009f])[^\\u0007\\u001b\\u009c\\n]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?',
    '\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?',
    '\\r(?!\\n)',
    '[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]',
  ].join('|'),
  'g',
);

/** Whether `text` holds a control character other than tab, line feed and a CR before a line feed. */
export function hasControlCharacters(text: string): boolean {
  return CONTROL.test(text) || /\r(?!\n)/.test(text);
}

/** `text` with every terminal control sequence and control character (but tab and line breaks) removed. */
export function withoutControlSequences(text: string): string {
  return text.replace(SEQUENCE, '');
}
