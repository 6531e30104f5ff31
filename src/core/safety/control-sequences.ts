// Terminal control sequences, other control characters and invisible format
// characters, set aside before redaction matches (docs/PROTOCOL.md §10): a colour
// code between a name and its `=`, around a token or inside one, a secret in a
// string sequence's payload (which a terminal hides but a stored text keeps) or a
// zero-width space inside a token must not hide a secret from the patterns.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * Invisible characters a token can be split by without a reader seeing it:
 * every default-ignorable code point (Unicode's own list of what a renderer
 * draws as nothing) — soft hyphen, zero-width space, joiners, bidi controls,
 * byte order mark, variation selectors, tag characters, Hangul fillers. The
 * patterns using it carry the `u` flag.
 */
const INVISIBLE_SOURCE = '\\p{Default_Ignorable_Code_Point}';
const INVISIBLE = new RegExp(INVISIBLE_SOURCE, 'u');

/** The introducer of a string sequence: OSC, DCS, SOS, PM, APC, 7-bit or 8-bit. */
const STRING_INTRODUCER = '\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d-\\u009f]';
/** A string sequence's payload runs up to BEL, ST, the next escape or the end of the line. */
const STRING_PAYLOAD = '[^\\u0007\\u001b\\u009c\\n]*';
const STRING_TERMINATOR = '\\u0007|\\u001b\\\\|\\u009c';

/**
 * One control sequence (ECMA-48), or one other control character:
 * - string sequences (OSC, DCS, SOS, PM, APC), 7-bit or 8-bit introducer, with
 *   their payload, up to BEL, ST or the end of the line;
 * - CSI sequences (`ESC [` or `\x9b`, parameters, intermediates, final byte);
 * - other escapes (`ESC` + intermediates + final byte: `ESC ( B`, `ESC 7`);
 * - a lone C0 or C1 control, DEL, or a carriage return not ending a line
 *   (tab and line feed stay: they separate values).
 */
const SEQUENCE_SOURCES = [
  `(?:${STRING_INTRODUCER})${STRING_PAYLOAD}(?:${STRING_TERMINATOR})?`,
  '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?',
  '\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?',
  '\\r(?!\\n)',
  '[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]',
];
const SEQUENCE = new RegExp(SEQUENCE_SOURCES.join('|'), 'g');

/**
 * The same units for a view: a string sequence with its parts in groups
 * (introducer, payload, terminator), and runs of invisible characters.
 */
const UNIT = new RegExp(
  [
    `(${STRING_INTRODUCER})(${STRING_PAYLOAD})(${STRING_TERMINATOR})?`,
    ...SEQUENCE_SOURCES.slice(1),
    `(?:${INVISIBLE_SOURCE})+`,
  ].join('|'),
  'gu',
);

/** A character a payload keeps out of a view: a control character or an invisible one. */
const HIDDEN_IN_PAYLOAD = new RegExp(
  `(?:[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]|${INVISIBLE_SOURCE})+`,
  'gu',
);

const STRING_SEQUENCE = new RegExp(STRING_INTRODUCER);

/** Whether `text` holds a control character other than tab, line feed and a CR before a line feed. */
export function hasControlCharacters(text: string): boolean {
  return CONTROL.test(text) || /\r(?!\n)/.test(text);
}

/** Whether `text` holds anything a view sets aside: a control character or an invisible one. */
export function hasHiddenCharacters(text: string): boolean {
  return hasControlCharacters(text) || INVISIBLE.test(text);
}

/** Whether `text` holds a string sequence (OSC, DCS, SOS, PM, APC). */
export function hasStringSequence(text: string): boolean {
  return STRING_SEQUENCE.test(text);
}

/** `text` with every terminal control sequence and control character (but tab and line breaks) removed. */
export function withoutControlSequences(text: string): string {
  return text.replace(SEQUENCE, '');
}

/** What a string sequence's introducer or terminator becomes in a view: a space, or nothing. */
export type Boundary = 'separate' | 'join';

export interface ViewOptions {
  /** Whether string sequences keep their payload (what a reader of the stored text sees) or lose it (what a terminal shows). */
  readonly payload: boolean;
  readonly introducer: Boundary;
  readonly terminator: Boundary;
}

/** A text as redaction matches it, and where each of its characters came from. */
export interface TextView {
  readonly text: string;
  /** `origin[i]`: the index in the original text of `text[i]`. */
  readonly origin: Int32Array;
}

/**
 * `text` without its control sequences, control characters (but tab and line
 * breaks) and invisible characters; with `payload`, string sequences keep their
 * payload's visible characters, their introducer and terminator becoming a
 * space or nothing.
 */
export function textView(text: string, options: ViewOptions): TextView {
  const pieces: string[] = [];
  const origin = new Int32Array(text.length);
  let length = 0;
  const keep = (from: number, to: number) => {
    if (to <= from) return;
    pieces.push(text.slice(from, to));
    for (let at = from; at < to; at++) origin[length++] = at;
  };
  const separate = (at: number) => {
    pieces.push(' ');
    origin[length++] = at;
  };
  const keepVisible = (from: number, to: number) => {
    const payload = text.slice(from, to);
    let last = 0;
    for (const hidden of payload.matchAll(HIDDEN_IN_PAYLOAD)) {
      keep(from + last, from + hidden.index);
      last = hidden.index + hidden[0].length;
    }
    keep(from + last, to);
  };
  let last = 0;
  for (const unit of text.matchAll(UNIT)) {
    keep(last, unit.index);
    last = unit.index + unit[0].length;
    const [, introducer, payload, terminator] = unit;
    if (introducer === undefined || payload === undefined || !options.payload) continue;
    if (options.introducer === 'separate') separate(unit.index);
    const payloadAt = unit.index + introducer.length;
    keepVisible(payloadAt, payloadAt + payload.length);
    if (terminator !== undefined && options.terminator === 'separate') separate(payloadAt + payload.length);
  }
  keep(last, text.length);
  return { text: pieces.join(''), origin: origin.subarray(0, length) };
}
