// Golden transcripts for serve(): each golden/*.txt is one session. Lines are
//   @manifest <name>   which fixture manifest serves the session (default: full)
//   > <request line>   sent verbatim (raw bytes: a transcript may hold invalid UTF-8)
//   < <response line>  the exact line serve() must answer, right after its request
//   # comment
// The cases that cannot be exact (default times) or do not fit a text file
// (a line over 1 MiB) are written in code below.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
} from '../src/constants.js';
import { PluginError } from '../src/serve.js';
import { FULL_MANIFEST, MANIFESTS, fixtureHandler, runServe } from './serve-harness.js';

const goldenDir = join(dirname(fileURLToPath(import.meta.url)), 'golden');

interface Transcript {
  manifest: string;
  requests: Buffer[];
  expected: string[];
}

function parseTranscript(bytes: Buffer, file: string): Transcript {
  const transcript: Transcript = { manifest: 'full', requests: [], expected: [] };
  const lines: Buffer[] = [];
  for (let start = 0; start < bytes.length;) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    lines.push(bytes.subarray(start, end));
    start = end + 1;
  }
  let awaitingResponse = false;
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    const text = line.toString('utf8');
    if (text.startsWith('> ') || text === '>') {
      if (awaitingResponse) throw new Error(`${where}: two requests in a row; each needs its "< " line`);
      transcript.requests.push(Buffer.from(line.subarray(2)));
      awaitingResponse = true;
    } else if (text.startsWith('< ')) {
      if (!awaitingResponse) throw new Error(`${where}: a response without a request before it`);
      transcript.expected.push(text.slice(2));
      awaitingResponse = false;
    } else if (text.startsWith('@manifest ')) {
      transcript.manifest = text.slice('@manifest '.length).trim();
      if (!(transcript.manifest in MANIFESTS)) throw new Error(`${where}: unknown manifest`);
    } else if (text !== '' && !text.startsWith('#')) {
      throw new Error(`${where}: a transcript line starts with "> ", "< ", "@manifest " or "#"`);
    }
  });
  if (awaitingResponse) throw new Error(`${file}: the last request has no "< " line`);
  return transcript;
}

const transcripts = readdirSync(goldenDir)
  .filter((name) => name.endsWith('.txt'))
  .sort();

describe('golden transcripts', () => {
  it('has the transcripts this suite relies on', () => {
    expect(transcripts).toEqual(
      expect.arrayContaining([
        'errors-handler.txt',
        'errors-method-not-found.txt',
        'errors-invalid-params.txt',
        'errors-parse.txt',
        'errors-permission-full.txt',
        'errors-permission-inspect-only.txt',
        'errors-state.txt',
        'ids.txt',
        'success.txt',
        'method-names-from-the-object-prototype.txt',
      ]),
    );
  });

  it.each(transcripts)('%s', async (file) => {
    const transcript = parseTranscript(readFileSync(join(goldenDir, file)), file);
    expect(transcript.requests.length).toBeGreaterThan(0);
    const input = Buffer.concat(transcript.requests.flatMap((request) => [request, Buffer.from('\n')]));
    const { lines } = await runServe(MANIFESTS[transcript.manifest]!, fixtureHandler, [input]);
    // Pair each answer with its request, so a mismatch shows which request it was.
    const pairs = (answers: string[]) =>
      answers.map((answer, index) => ({
        request: transcript.requests[index]?.toString('utf8') ?? '(no request)',
        answer,
      }));
    expect(pairs(lines)).toEqual(pairs(transcript.expected));
  });
});

describe('serve() cases written in code', () => {
  const initialize = (id: number, hostVersion = 'golden-host') =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion,
        grantedScopes: FULL_MANIFEST.requestedScopes,
      },
    });
  const lineOf = (text: string) => Buffer.from(`${text}\n`);

  it('answers a request line over 1 MiB with -32700 and id null, then keeps serving', async () => {
    const oversized = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${'x'.repeat(MAX_MESSAGE_BYTES)}"}}`;
    expect(Buffer.byteLength(oversized)).toBeGreaterThan(MAX_MESSAGE_BYTES);
    // Sent in 64 KiB pieces, as a pipe would deliver it.
    const bytes = lineOf(oversized);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < bytes.length; offset += 65_536)
      chunks.push(bytes.subarray(offset, offset + 65_536));
    chunks.push(lineOf(initialize(2)));
    const { lines } = await runServe(FULL_MANIFEST, fixtureHandler, chunks);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: ERROR_CODES.parseError, message: `request line exceeds ${MAX_MESSAGE_BYTES} bytes` },
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({
      jsonrpc: '2.0',
      id: 2,
      result: { protocolVersion: PROTOCOL_VERSION },
    });
  });

  it('accepts a request line of exactly 1 MiB (the limit is inclusive)', async () => {
    const head = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"${PROTOCOL_VERSION}","hostVersion":"`;
    const tail = '","grantedScopes":[]}}';
    const line = head + 'h'.repeat(MAX_MESSAGE_BYTES - head.length - tail.length) + tail;
    expect(Buffer.byteLength(line)).toBe(MAX_MESSAGE_BYTES);
    const { lines } = await runServe(FULL_MANIFEST, fixtureHandler, [lineOf(line)]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { grantedScopes: [] } });
  });

  it('defaults checkedAt and observedAt to the current RFC 3339 time', async () => {
    const before = Date.now();
    const { lines } = await runServe(FULL_MANIFEST, fixtureHandler, [
      lineOf(initialize(1, 'health-default-time')),
      lineOf('{"jsonrpc":"2.0","id":2,"method":"plugin.health","params":{}}'),
      lineOf(
        '{"jsonrpc":"2.0","id":3,"method":"project.inspect","params":{"project":{"id":"default-time","displayName":"Now"}}}',
      ),
    ]);
    const after = Date.now();
    expect(lines).toHaveLength(3);
    const health = JSON.parse(lines[1]!) as { id: number; result: { status: string; checkedAt: string } };
    const inspect = JSON.parse(lines[2]!) as { id: number; result: { observedAt: string; facts: unknown[] } };
    expect(health).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { status: 'healthy', checkedAt: expect.any(String) },
    });
    expect(inspect.result).toEqual({
      summary: 'Now: root (not sent); granted project.metadata.read,project.files.read,project.operate',
      facts: [],
      actions: [],
      warnings: [],
      observedAt: expect.any(String),
    });
    const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
    for (const time of [health.result.checkedAt, inspect.result.observedAt]) {
      expect(time).toMatch(rfc3339);
      const at = Date.parse(time);
      expect(at).toBeGreaterThanOrEqual(before - 1_000);
      expect(at).toBeLessThanOrEqual(after + 1_000);
    }
  });

  it('reports a mistyped params field as mistyped, not as missing', async () => {
    const { lines } = await runServe(FULL_MANIFEST, fixtureHandler, [
      lineOf(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"switchyard.plugin/v1","hostVersion":7,"grantedScopes":[]}}',
      ),
    ]);
    const response = JSON.parse(lines[0]!) as { error: { code: number; message: string } };
    expect(response.error.code).toBe(ERROR_CODES.invalidParams);
    expect(response.error.message).toContain('params.hostVersion');
    // hostVersion is present (it is 7): "is required" sends the plugin author looking for the wrong problem.
    expect(response.error.message).not.toContain('is required');
  });

  it('cuts a -32000 message of 5,000 characters to at most 1,024 characters', async () => {
    const { lines } = await runServe(FULL_MANIFEST, fixtureHandler, [
      lineOf(initialize(1)),
      lineOf(
        '{"jsonrpc":"2.0","id":2,"method":"project.inspect","params":{"project":{"id":"throws-long","displayName":"P"}}}',
      ),
    ]);
    const response = JSON.parse(lines[1]!) as { error: { code: number; message: string } };
    expect(response.error.code).toBe(ERROR_CODES.applicationError);
    expect(response.error.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(response.error.message.length).toBeGreaterThan(1_000);
    expect(response.error.message.startsWith('long failure xxx')).toBe(true);
  });

  it('cuts a long -32000 message without splitting a character (no lone surrogate)', async () => {
    // 1,023 UTF-16 units is where cut() slices; an emoji is two units, so a
    // message of emoji is sliced in the middle of one unless cut() is careful.
    const handler = {
      inspect(): never {
        throw new PluginError('🔥'.repeat(2_500));
      },
    };
    const { lines } = await runServe(FULL_MANIFEST, handler, [
      lineOf(initialize(1)),
      lineOf(
        '{"jsonrpc":"2.0","id":2,"method":"project.inspect","params":{"project":{"id":"p","displayName":"P"}}}',
      ),
    ]);
    const message = (JSON.parse(lines[1]!) as { error: { message: string } }).error.message;
    // A lone surrogate can only be sent as a \udXXX escape, which strict decoders (Go) turn into U+FFFD.
    const loneSurrogates =
      message.match(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g) ?? [];
    expect(loneSurrogates.map((unit) => `U+${unit.charCodeAt(0).toString(16).toUpperCase()}`)).toEqual([]);
    expect([...message].length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
  });
});
