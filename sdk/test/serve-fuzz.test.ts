// Property test for serve() and the line framing under arbitrary input: a
// seeded PRNG (reproducible: set FUZZ_SEED to replay a failure) generates
// lines of every kind, and each must get exactly one well-formed response.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, SCOPES } from '../src/constants.js';
import { LineSplitter, type LineEvent } from '../src/lines.js';
import { METHODS, errorResponseSchema, successResponseSchema } from '../src/schemas.js';
import { FULL_MANIFEST, fixtureHandler, runServe } from './serve-harness.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_2026);
const LINES = 2_000;
const TIME_BOUND_MS = 20_000;

/** mulberry32: small, fast, good enough to fuzz with, and reproducible. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(values: readonly T[]): T => values[int(0, values.length - 1)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof prng>;

const NEWLINE = 0x0a;
const withoutNewlines = (bytes: Buffer) => {
  for (let index = 0; index < bytes.length; index++) if (bytes[index] === NEWLINE) bytes[index] = 0x20;
  return bytes;
};

function randomString(random: Random): string {
  const alphabet = [
    'a',
    'z',
    '0',
    ' ',
    '"',
    '\\',
    '/',
    'é',
    '€',
    '🔥',
    '\u0000',
    '\t',
    '\n',
    '\u2028',
    '{',
    '}',
  ];
  let text = '';
  for (let length = random.int(0, 12); length > 0; length--) text += random.pick(alphabet);
  return text;
}

function randomJson(random: Random, depth = 0): unknown {
  const kind = random.int(0, depth > 3 ? 4 : 7);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random.next() < 0.5;
    case 2:
      return random.pick([0, 1, -1, 2 ** 31, 2 ** 53 - 1, 1.5, 1e21, -(2 ** 63), random.int(-1e6, 1e6)]);
    case 3:
    case 4:
      return randomString(random);
    case 5:
      return Array.from({ length: random.int(0, 4) }, () => randomJson(random, depth + 1));
    default: {
      const keys = ['jsonrpc', 'id', 'method', 'params', 'result', 'error', 'project', 'extra', '__proto__'];
      const object: Record<string, unknown> = {};
      for (let count = random.int(0, 5); count > 0; count--)
        object[random.pick(keys)] = randomJson(random, depth + 1);
      return object;
    }
  }
}

function randomId(random: Random): unknown {
  return random.pick([
    random.int(1, 1_000),
    2_147_483_648,
    2 ** 53 - 1,
    0,
    `req-${random.int(0, 99)}`,
    '',
    '7',
    1.25,
  ]);
}

const project = (random: Random) => ({
  id: randomString(random),
  displayName: randomString(random),
  ...(random.next() < 0.3 ? { root: '/srv/p' } : {}),
});

function validRequest(random: Random): Record<string, unknown> {
  const method = random.pick([...METHODS, ...METHODS, 'project.delete', 'rpc.discover', 'shell', '']);
  const params: Record<string, unknown> =
    method === 'initialize'
      ? {
          protocolVersion: random.next() < 0.9 ? PROTOCOL_VERSION : 'switchyard.plugin/v0',
          hostVersion: 'fuzz',
          grantedScopes: SCOPES.filter(() => random.next() < 0.7),
        }
      : method === 'project.inspect'
        ? { project: project(random) }
        : method === 'project.operate'
          ? {
              project: project(random),
              action: random.pick(['echo', 'throws', 'invalid-status']),
              input: randomJson(random),
            }
          : {};
  if (random.next() < 0.1) params[random.pick(['extra', 'verbose'])] = true;
  return { jsonrpc: '2.0', id: randomId(random), method, params };
}

type Kind =
  'bytes' | 'invalid-utf8' | 'truncated' | 'json' | 'request' | 'envelope-mutant' | 'whitespace' | 'huge';

function randomLine(random: Random, kind: Kind): Buffer {
  switch (kind) {
    case 'bytes':
      return withoutNewlines(
        Buffer.from(Array.from({ length: random.int(1, 300) }, () => random.int(0, 255))),
      );
    case 'invalid-utf8': {
      const text = Buffer.from(JSON.stringify(validRequest(random)));
      const bad = Buffer.from(
        random.pick([[0xff], [0xc0, 0x80], [0xe2, 0x82], [0x80], [0xed, 0xa0, 0x80], [0xf8]]),
      );
      const at = random.int(0, text.length);
      return Buffer.concat([text.subarray(0, at), bad, text.subarray(at)]);
    }
    case 'truncated': {
      const text = JSON.stringify(validRequest(random));
      return Buffer.from(text.slice(0, random.int(1, text.length - 1)));
    }
    case 'json':
      return withoutNewlines(Buffer.from(JSON.stringify(randomJson(random)) ?? 'null'));
    case 'request':
      return Buffer.from(JSON.stringify(validRequest(random)));
    case 'envelope-mutant': {
      const request: Record<string, unknown> = validRequest(random);
      const field = random.pick(['jsonrpc', 'id', 'method', 'params', 'extra']);
      if (random.next() < 0.5) delete request[field];
      else request[field] = randomJson(random);
      return Buffer.from(JSON.stringify(request));
    }
    case 'whitespace':
      return Buffer.from(
        Array.from({ length: random.int(0, 20) }, () => random.pick([' ', '\t', '\r'])).join(''),
      );
    case 'huge': {
      const size = MAX_MESSAGE_BYTES + random.int(1, 300_000);
      const head = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"`;
      return random.next() < 0.5
        ? Buffer.from(head + 'x'.repeat(size - head.length))
        : withoutNewlines(Buffer.from(Array.from({ length: size }, () => random.int(0, 255))));
    }
  }
}

// An oracle written independently of the SDK's schemas: what serve() must answer.
type Expectation = { envelope: false } | { envelope: true; id: unknown; method: string };

function classify(line: Buffer): Expectation {
  if (line.length > MAX_MESSAGE_BYTES) return { envelope: false };
  let value: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(line);
    if (text.trim() === '') return { envelope: false };
    value = JSON.parse(text);
  } catch {
    return { envelope: false };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { envelope: false };
  const envelope = value as Record<string, unknown>;
  const allowed = ['jsonrpc', 'id', 'method', 'params'];
  if (Object.keys(envelope).some((key) => !allowed.includes(key))) return { envelope: false };
  if (envelope.jsonrpc !== '2.0') return { envelope: false };
  if (typeof envelope.id !== 'number' && typeof envelope.id !== 'string') return { envelope: false };
  if (typeof envelope.method !== 'string') return { envelope: false };
  const params = envelope.params;
  if ('params' in envelope && (typeof params !== 'object' || params === null || Array.isArray(params)))
    return { envelope: false };
  return { envelope: true, id: envelope.id, method: envelope.method };
}

describe('serve() under fuzzed input', () => {
  it(`answers each of ${LINES} random lines with exactly one valid response (seed ${SEED})`, async () => {
    const random = prng(SEED);
    const kinds: Kind[] = [
      'bytes',
      'invalid-utf8',
      'truncated',
      'json',
      'request',
      'request',
      'envelope-mutant',
      'whitespace',
    ];
    const lines = Array.from({ length: LINES }, () => randomLine(random, random.pick(kinds)));
    // A few lines over the limit, at random places; and a valid initialize somewhere early.
    for (let count = 0; count < 4; count++)
      lines.splice(random.int(0, lines.length), 0, randomLine(random, 'huge'));
    lines.splice(
      random.int(0, 50),
      0,
      Buffer.from(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: PROTOCOL_VERSION, hostVersion: 'fuzz', grantedScopes: [...SCOPES] },
        }),
      ),
    );
    const kindsSeen = lines.map(classify);
    expect(kindsSeen.filter((expectation) => expectation.envelope).length).toBeGreaterThan(200);
    expect(kindsSeen.filter((expectation) => !expectation.envelope).length).toBeGreaterThan(1_000);

    // The whole stream, cut into random chunks, so lines straddle chunk boundaries.
    const stream = Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')]));
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < stream.length;) {
      const size = random.pick([1, 7, 100, 4_096, 65_536, random.int(1, 300_000)]);
      chunks.push(stream.subarray(offset, offset + size));
      offset += size;
    }

    const started = Date.now();
    const { lines: responses } = await runServe(FULL_MANIFEST, fixtureHandler, chunks);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(TIME_BOUND_MS);
    expect(responses).toHaveLength(lines.length);

    let initialized = false;
    let successes = 0;
    const problems: string[] = [];
    responses.forEach((response, index) => {
      const request = lines[index]!;
      const expectation = kindsSeen[index]!;
      const where = `line ${index} (${request.subarray(0, 80).toString('latin1')})`;
      let value: unknown;
      try {
        value = JSON.parse(response);
      } catch {
        problems.push(`${where}: response is not JSON: ${response.slice(0, 120)}`);
        return;
      }
      const failure = errorResponseSchema.safeParse(value);
      const success = successResponseSchema.safeParse(value);
      if (failure.success === success.success) {
        problems.push(
          `${where}: not exactly one of a success or an error envelope: ${response.slice(0, 200)}`,
        );
        return;
      }
      if (!expectation.envelope) {
        if (
          !failure.success ||
          failure.data.id !== null ||
          failure.data.error.code !== ERROR_CODES.parseError
        )
          problems.push(`${where}: expected -32700 with id null, got ${response.slice(0, 200)}`);
        return;
      }
      if (success.success) successes++;
      const id = failure.success ? failure.data.id : success.data!.id;
      if (JSON.stringify(id) !== JSON.stringify(expectation.id))
        problems.push(`${where}: id ${JSON.stringify(id)} does not echo ${JSON.stringify(expectation.id)}`);
      const code = failure.success ? failure.data.error.code : undefined;
      if (code !== undefined && !Object.values(ERROR_CODES).includes(code as never))
        problems.push(`${where}: unknown error code ${code}`);
      if (failure.success && failure.data.error.message.length > 1_024)
        problems.push(`${where}: error message longer than 1,024 characters`);
      const known = (METHODS as readonly string[]).includes(expectation.method);
      if (!known && code !== ERROR_CODES.methodNotFound)
        problems.push(`${where}: unknown method must be -32601, got ${response.slice(0, 200)}`);
      if (known && expectation.method !== 'initialize' && !initialized && code !== ERROR_CODES.notInitialized)
        problems.push(`${where}: a call before initialize must be -32002, got ${response.slice(0, 200)}`);
      if (expectation.method === 'initialize') {
        if (initialized && code !== ERROR_CODES.notInitialized)
          problems.push(`${where}: a second initialize must be -32002, got ${response.slice(0, 200)}`);
        if (success.success) initialized = true;
      }
    });
    expect(initialized).toBe(true);
    // The generator reaches the handlers, not only the error paths.
    expect(successes).toBeGreaterThan(50);
    expect(problems.slice(0, 10)).toEqual([]);
  });
});

describe('LineSplitter', () => {
  it('holds at most 1 MiB of a 5 MiB line fed in 64 KiB chunks, reports it once, then delivers the next line intact', () => {
    const splitter = new LineSplitter(MAX_MESSAGE_BYTES);
    const next = Buffer.from('{"jsonrpc":"2.0","id":2,"method":"plugin.health","params":{"é":"🔥"}}');
    const stream = Buffer.concat([
      Buffer.alloc(5 * 1_048_576, 0x61),
      Buffer.from('\n'),
      next,
      Buffer.from('\n'),
    ]);
    const events: LineEvent[] = [];
    let maxBuffered = 0;
    for (let offset = 0; offset < stream.length; offset += 65_536) {
      events.push(...splitter.push(stream.subarray(offset, offset + 65_536)));
      maxBuffered = Math.max(maxBuffered, splitter.buffered);
      expect(splitter.buffered).toBeLessThanOrEqual(1_048_576);
    }
    events.push(...splitter.end());
    // It did buffer (up to the limit) before giving up on the line.
    expect(maxBuffered).toBeGreaterThan(1_048_576 - 65_536);
    expect(events.map((event) => event.kind)).toEqual(['oversized', 'line']);
    const last = events[1] as { kind: 'line'; bytes: Buffer };
    expect(last.bytes.equals(next)).toBe(true);
    expect(splitter.buffered).toBe(0);
  });

  it('delivers a line of exactly the limit and reports one byte more as oversized', () => {
    const splitter = new LineSplitter(16);
    const events = splitter.push(Buffer.from(`${'a'.repeat(16)}\n${'b'.repeat(17)}\nc`));
    expect(events.map((event) => (event.kind === 'line' ? event.bytes.toString() : 'oversized'))).toEqual([
      'a'.repeat(16),
      'oversized',
    ]);
    expect(
      splitter.end().map((event) => (event.kind === 'line' ? event.bytes.toString() : 'oversized')),
    ).toEqual(['c']);
  });

  it("keeps its own copy of a line: reusing the caller's buffer does not change a delivered line", () => {
    const splitter = new LineSplitter(1_024);
    const chunk = Buffer.from('abc');
    splitter.push(chunk);
    chunk.fill(0x7a);
    const events = splitter.push(Buffer.from('\n'));
    expect(events).toHaveLength(1);
    expect((events[0] as { bytes: Buffer }).bytes.toString()).toBe('abc');
  });
});
