// Pub/sub messages and the operation scripts against a real Redis: the
// transition script itself refuses to leave a terminal state (whatever states
// its caller allows), a cancel announces the operation's id (not its hash
// key), every message goes through its codec, and no Lua script touches a key
// it was not handed as KEYS.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor, type Keys } from '../../src/core/redis/index.js';
import { batchProgressMessage } from '../../src/core/work/batches/index.js';
import { operationActivityMessage, operationCancelMessage } from '../../src/core/work/operations/index.js';
import {
  OperationStore,
  TERMINAL_STATES,
  type OperationState,
} from '../../src/core/work/operations/operation-store.js';
import { REPO, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

let server: OwnedRedis;
let redis: Redis;
let listener: Redis;
let keys: Keys;
let store: OperationStore;
const heard: { channel: string; message: string }[] = [];

beforeAll(async () => {
  server = await startOwnedRedis();
  redis = new Redis(server.url);
  listener = new Redis(server.url);
  keys = keysFor(uniquePrefix('messages'));
  store = new OperationStore(redis, keys);
  await listener.psubscribe(`${keys.prefix}:*`);
  listener.on('pmessage', (_pattern: string, channel: string, message: string) =>
    heard.push({ channel, message }),
  );
});

afterAll(async () => {
  listener?.disconnect();
  redis?.disconnect();
  await server?.stop();
});

async function newOperation(): Promise<string> {
  const { operation } = await store.create({
    pluginId: 'p',
    projectId: 'x',
    action: 'a',
    input: null,
    requestedBy: 'test',
  });
  return operation.id;
}

describe('operation scripts and their messages', () => {
  it('a transition out of a terminal state is refused by the script, even when the caller allows that state', async () => {
    for (const terminal of TERMINAL_STATES) {
      const id = await newOperation();
      expect((await store.transition(id, ['queued'], terminal)).outcome).toBe('ok');
      await waitFor(`${terminal} announced`, async () =>
        heard.some((entry) => entry.channel === keys.operationEvents(id) && entry.message === terminal),
      );
      heard.length = 0;
      const everyState: OperationState[] = ['queued', 'running', ...TERMINAL_STATES];
      const again = await store.transition(id, everyState, 'running', { worker: 'late' });
      expect(again, `leaving ${terminal}`).toEqual({ outcome: 'terminal', previous: terminal });
      const record = await store.get(id);
      expect(record?.state).toBe(terminal);
      expect(record?.worker).toBeUndefined();
      // Nothing changed, so nothing was announced.
      await redis.publish(`${keys.prefix}:marker`, 'end');
      await waitFor('the marker', async () => heard.some((entry) => entry.message === 'end'));
      expect(heard.filter((entry) => entry.channel === keys.operationEvents(id))).toEqual([]);
    }
  });

  it("a cancel of a running operation announces the operation's id, which the worker's decoder reads", async () => {
    const id = await newOperation();
    await store.transition(id, ['queued'], 'running');
    heard.length = 0;
    expect((await store.requestCancel(id, 'user:test')).outcome).toBe('requested');
    await waitFor('the cancel message', async () =>
      heard.find((entry) => entry.channel === keys.operationCancelChannel),
    );
    const message = heard.find((entry) => entry.channel === keys.operationCancelChannel)!.message;
    expect(message).toBe(id);
    expect(operationCancelMessage.decode(message)).toBe(id);
  });

  it("a cancel of a queued operation ends it CANCELLED and publishes the new state on the operation's events", async () => {
    const id = await newOperation();
    heard.length = 0;
    expect((await store.requestCancel(id, 'user:test')).outcome).toBe('cancelled');
    await waitFor('the state message', async () =>
      heard.find((entry) => entry.channel === keys.operationEvents(id)),
    );
    expect(heard.find((entry) => entry.channel === keys.operationEvents(id))?.message).toBe('cancelled');
    expect(await store.get(id)).toMatchObject({ state: 'cancelled', errorCode: 'CANCELLED' });
  });

  it('codecs: what one side encodes the other decodes; a message of another form is ignored', () => {
    const activity = { kind: 'started', operationId: 'op_1' } as const;
    expect(operationActivityMessage.decode(operationActivityMessage.encode(activity))).toEqual(activity);
    expect(operationActivityMessage.decode('paused:op_1')).toBeUndefined();
    expect(operationActivityMessage.decode('op_1')).toBeUndefined();
    expect(operationCancelMessage.decode('')).toBeUndefined();
    expect(batchProgressMessage.decode('not json')).toBeUndefined();
    expect(batchProgressMessage.decode(JSON.stringify({ projectId: 'x' }))).toBeUndefined();
    expect(
      batchProgressMessage.decode(
        JSON.stringify({
          projectId: 'x',
          status: 'failed',
          succeeded: 1,
          failed: 1,
          total: 3,
          finished: false,
        }),
      ),
    ).toEqual({
      projectId: 'x',
      status: 'failed',
      succeeded: 1,
      failed: 1,
      cancelled: 0,
      total: 3,
      finished: false,
    });
  });

  it('no Lua script names a key it was not handed as KEYS', () => {
    const dir = join(REPO, 'src/core/redis/lua');
    const found: string[] = [];
    for (const file of readdirSync(dir)) {
      const source = readFileSync(join(dir, file), 'utf8').replace(/--\[\[[\s\S]*?\]\]/g, '');
      for (const call of source.matchAll(/redis\.call\('(\w+)',\s*([^,)]+)/g)) {
        const [, command, key] = call;
        if (command === 'PUBLISH') continue; // a channel, not a key
        if (!/^KEYS\[\d+\]$/.test(key!.trim())) found.push(`${file}: ${call[0]}`);
      }
    }
    expect(found, 'pass the key as KEYS, built in src/core/redis/keys.ts').toEqual([]);
  });
});
