// PluginClient against a simulated plugin over in-process PassThrough pairs.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  AnswerMemo,
  ClientBusyError,
  ConnectionClosedError,
  IdMismatchError,
  InvalidResponseError,
  ResponseTooLargeError,
  PluginClient,
  PluginRpcError,
  RequestAbortedError,
} from '../src/client.js';
import { MAX_MESSAGE_BYTES, PROTOCOL_VERSION } from '../src/constants.js';
import { identityOf } from '../src/manifest.js';
import { serve } from '../src/serve.js';
import { FIXED_TIME, FULL_MANIFEST, fixtureHandler } from './serve-harness.js';

const HEALTH = { status: 'healthy', checkedAt: FIXED_TIME };
const INIT_PARAMS = {
  protocolVersion: PROTOCOL_VERSION,
  hostVersion: 'client-test',
  grantedScopes: ['project.metadata.read' as const],
};
const INIT_RESULT = {
  protocolVersion: PROTOCOL_VERSION,
  plugin: identityOf(FULL_MANIFEST),
  grantedScopes: ['project.metadata.read'],
};

/**
 * A fake plugin: `answer` gets each request line the client wrote (parsed)
 * and returns what to write back on stdout (or nothing).
 */
function fakePlugin(
  answer: (request: { id: number; method: string; params: unknown }) => string | undefined,
) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const requests: string[] = [];
  let pending = '';
  stdin.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      requests.push(line);
      const reply = answer(JSON.parse(line) as { id: number; method: string; params: unknown });
      if (reply !== undefined) stdout.write(reply);
    }
  });
  const client = new PluginClient(stdin, stdout);
  return { client, stdin, stdout, requests };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PluginClient', () => {
  it('returns the parsed result of a valid exchange, with integer ids from 1', async () => {
    const { client, requests } = fakePlugin((request) =>
      request.method === 'initialize'
        ? `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: INIT_RESULT })}\n`
        : `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: HEALTH })}\n`,
    );
    await expect(client.request('initialize', INIT_PARAMS)).resolves.toEqual(INIT_RESULT);
    await expect(client.request('plugin.health', {})).resolves.toEqual(HEALTH);
    expect(requests).toEqual([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'plugin.health', params: {} }),
    ]);
  });

  it('talks to a real serve() session', async () => {
    const toPlugin = new PassThrough();
    const fromPlugin = new PassThrough();
    const served = serve(FULL_MANIFEST, fixtureHandler, { input: toPlugin, output: fromPlugin });
    const client = new PluginClient(toPlugin, fromPlugin);
    await expect(client.request('initialize', INIT_PARAMS)).resolves.toEqual(INIT_RESULT);
    await expect(
      client.request('project.inspect', { project: { id: 'omits', displayName: 'P' } }),
    ).resolves.toEqual({
      summary: 'P: root (not sent); granted project.metadata.read',
      facts: [],
      actions: [],
      warnings: [],
      observedAt: FIXED_TIME,
    });
    const denied = await client
      .request('project.operate', { project: { id: 'p', displayName: 'P' }, action: 'echo', input: 1 })
      .catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(PluginRpcError);
    expect(denied).toMatchObject({ code: -32003 });
    client.close();
    await served;
  });

  const malformed: [string, (id: number) => string, string][] = [
    [
      'an unknown field in the envelope',
      (id) => JSON.stringify({ jsonrpc: '2.0', id, result: HEALTH, extra: 1 }),
      'unknown field "extra"',
    ],
    [
      'an unknown field in the result',
      (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { ...HEALTH, uptime: 5 } }),
      'unknown field "uptime"',
    ],
    [
      'an unknown field in the error object',
      (id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'x', data: {} } }),
      'unknown field "data"',
    ],
    ['neither result nor error', (id) => JSON.stringify({ jsonrpc: '2.0', id }), 'result'],
    [
      'result beside an error object with an unknown field',
      (id) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: HEALTH,
          error: { code: -32000, message: 'x', data: 1 },
        }),
      'unknown field "data"',
    ],
    [
      'result beside an error and an unknown envelope field',
      (id) =>
        JSON.stringify({ jsonrpc: '2.0', id, result: {}, error: { code: -32000, message: 'x' }, extra: 1 }),
      'unknown field "extra"',
    ],
    [
      'two JSON documents on one line',
      (id) => `${JSON.stringify({ jsonrpc: '2.0', id, result: HEALTH })} {}`,
      'not exactly one JSON document',
    ],
    ['jsonrpc 1.0', (id) => JSON.stringify({ jsonrpc: '1.0', id, result: HEALTH }), 'jsonrpc'],
    [
      'a result of the wrong shape',
      (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { status: 'ok' } }),
      'result.status',
    ],
    ['a banner instead of JSON', () => 'plugin starting...', 'not exactly one JSON document'],
  ];

  it.each(malformed)('rejects %s with InvalidResponseError', async (_name, reply, text) => {
    const { client } = fakePlugin((request) => `${reply(request.id)}\n`);
    const error = await client.request('plugin.health', {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toContain(text);
  });

  it('rejects a line that is not valid UTF-8 with InvalidResponseError', async () => {
    const { client, stdout } = fakePlugin(() => undefined);
    const pending = client.request('plugin.health', {}).catch((caught: unknown) => caught);
    stdout.write(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
    expect(await pending).toBeInstanceOf(InvalidResponseError);
  });

  it('rejects a response with another id with IdMismatchError', async () => {
    for (const id of [2, '1', null]) {
      const { client } = fakePlugin(() => `${JSON.stringify({ jsonrpc: '2.0', id, result: HEALTH })}\n`);
      const error = await client.request('plugin.health', {}).catch((caught: unknown) => caught);
      expect(error, JSON.stringify(id)).toBeInstanceOf(IdMismatchError);
      expect(error).toMatchObject({ expected: 1, received: id });
    }
    const { client } = fakePlugin(
      () => `${JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'x' } })}\n`,
    );
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(IdMismatchError);
  });

  it('turns an error response into PluginRpcError with its code and message', async () => {
    const { client } = fakePlugin(
      (request) =>
        `${JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32003, message: 'permission denied: nope' } })}\n`,
    );
    const error = await client.request('plugin.health', {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PluginRpcError);
    expect(error).toMatchObject({ kind: 'rpc-error', code: -32003, rpcMessage: 'permission denied: nope' });
  });

  // PROTOCOL §6: the Go SDK answers a handler error with the zero value of its
  // result struct AND the error; a well-formed error wins, whatever result holds.
  it.each([
    ['a zero-value health result', { status: '', checkedAt: '0001-01-01T00:00:00Z' }],
    ['null', null],
    ['a valid result', HEALTH],
  ])('treats an error response that also carries %s as that error (Go SDK)', async (_name, result) => {
    const { client } = fakePlugin(
      (request) =>
        `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result, error: { code: -32000, message: 'disk full' } })}\n`,
    );
    const error = await client.request('plugin.health', {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PluginRpcError);
    expect(error).toMatchObject({ kind: 'rpc-error', code: -32000, rpcMessage: 'disk full' });
  });

  it('still checks the id of an error response that carries a result', async () => {
    const { client } = fakePlugin(
      () =>
        `${JSON.stringify({ jsonrpc: '2.0', id: 9, result: {}, error: { code: -32000, message: 'x' } })}\n`,
    );
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(IdMismatchError);
  });

  it('rejects a response line over 1 MiB without holding more than the limit while a 3 MiB line streams in', async () => {
    const { client, stdout } = fakePlugin(() => undefined);
    const first = client.request('plugin.health', {}).catch((caught: unknown) => caught);
    const prefix = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"status":"healthy","message":"`);
    const line = Buffer.concat([prefix, Buffer.alloc(3 * 1_048_576, 0x6d), Buffer.from('"}}\n')]);
    let maxBuffered = 0;
    for (let offset = 0; offset < line.length; offset += 65_536) {
      stdout.write(line.subarray(offset, offset + 65_536));
      await tick();
      maxBuffered = Math.max(maxBuffered, client.bufferedBytes);
      expect(client.bufferedBytes).toBeLessThanOrEqual(1_048_577);
    }
    // It was measured while buffering, not only after giving up.
    expect(maxBuffered).toBeGreaterThan(MAX_MESSAGE_BYTES - 65_536);
    const error = await first;
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ kind: 'oversized', limit: MAX_MESSAGE_BYTES });
    // The rest of the oversized line is skipped: the next response is read normally.
    const second = client.request('plugin.health', {});
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, result: HEALTH })}\n`);
    await expect(second).resolves.toEqual(HEALTH);
  });

  it('rejects with ConnectionClosedError when stdout ends before an answer, also for later calls', async () => {
    const { client, stdout } = fakePlugin(() => undefined);
    const pending = client.request('plugin.health', {}).catch((caught: unknown) => caught);
    stdout.write('{"jsonrpc":"2.0","id":1,"res');
    stdout.end();
    expect(await pending).toBeInstanceOf(InvalidResponseError);
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('rejects with ConnectionClosedError when stdout closes with nothing sent', async () => {
    const { client, stdout } = fakePlugin(() => undefined);
    const pending = client.request('initialize', INIT_PARAMS).catch((caught: unknown) => caught);
    stdout.end();
    const error = await pending;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).toMatchObject({ kind: 'closed' });
  });

  it('rejects with RequestAbortedError when the signal aborts, and before sending when already aborted', async () => {
    const { client } = fakePlugin(() => undefined);
    const controller = new AbortController();
    const pending = client.request('plugin.health', {}, controller.signal).catch((caught: unknown) => caught);
    await tick();
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(error).toMatchObject({ kind: 'aborted' });
    await expect(client.request('plugin.health', {}, AbortSignal.abort())).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
  });

  it('refuses a second request while one is in flight', async () => {
    const { client, stdout } = fakePlugin(() => undefined);
    const first = client.request('plugin.health', {});
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(ClientBusyError);
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, result: HEALTH })}\n`);
    await expect(first).resolves.toEqual(HEALTH);
  });

  it('treats output the plugin wrote before the request as the answer (so noise fails the call)', async () => {
    const { client, stdout } = fakePlugin(
      (request) => `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: HEALTH })}\n`,
    );
    stdout.write('hello from the plugin\n');
    await tick();
    await expect(client.request('plugin.health', {})).rejects.toBeInstanceOf(InvalidResponseError);
  });
});

describe('AnswerMemo: validated answers kept by their exact bytes', () => {
  const line = (id: number, result: unknown) => `${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`;

  it('the same bytes for the same method and id give the validated result again without parsing', async () => {
    const memo = new AnswerMemo();
    const first = fakePlugin((request) => line(request.id, INIT_RESULT));
    const one = await first.client.request('initialize', INIT_PARAMS, undefined, memo);
    const second = fakePlugin((request) => line(request.id, INIT_RESULT));
    const two = await second.client.request('initialize', INIT_PARAMS, undefined, memo);
    expect(two).toBe(one);
    expect(Object.isFrozen(two)).toBe(true);
  });

  it('other bytes are validated afresh: an invalid answer still fails after a valid one', async () => {
    const memo = new AnswerMemo();
    await fakePlugin((request) => line(request.id, INIT_RESULT)).client.request(
      'initialize',
      INIT_PARAMS,
      undefined,
      memo,
    );
    const lying = fakePlugin((request) => line(request.id, { ...INIT_RESULT, unknownField: 1 }));
    await expect(lying.client.request('initialize', INIT_PARAMS, undefined, memo)).rejects.toBeInstanceOf(
      InvalidResponseError,
    );
  });

  it('the same bytes answering another request id still fail as an id mismatch', async () => {
    const memo = new AnswerMemo();
    const { client } = fakePlugin(() => line(1, HEALTH));
    expect(await client.request('plugin.health', {}, undefined, memo)).toEqual(HEALTH);
    // Request 2 gets the bytes that answered request 1.
    await expect(client.request('plugin.health', {}, undefined, memo)).rejects.toBeInstanceOf(
      IdMismatchError,
    );
  });
});

describe('requests delivered ahead', () => {
  it('nextRequestLine is the line request() writes; with `written` it writes nothing and reads the answer', async () => {
    const { client, stdin, stdout, requests } = fakePlugin((request) =>
      request.method === 'initialize'
        ? `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: INIT_RESULT })}\n`
        : undefined,
    );
    await client.request('initialize', INIT_PARAMS);
    expect(client.lastAnswer?.toString('utf8')).toBe(
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: INIT_RESULT }),
    );
    const ahead = client.nextRequestLine('plugin.health', {});
    expect(ahead).toBe(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'plugin.health', params: {} })}\n`);
    // As a spawn helper would: the line reaches the plugin without the client, the answer comes back.
    stdin.write(ahead);
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, result: HEALTH })}\n`);
    await expect(client.request('plugin.health', {}, undefined, undefined, true)).resolves.toEqual(HEALTH);
    expect(requests).toHaveLength(2); // initialize, and the line written ahead: nothing written twice
  });
});
