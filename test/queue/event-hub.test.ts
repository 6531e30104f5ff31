// The shared subscriber (core/redis/event-hub.ts): every follower of a runtime rides
// one Redis connection, a channel is subscribed once however many follow it
// and unsubscribed after the last, the connection closes when nothing is
// followed, and when the connection is killed the followers re-read as soon as
// it is back — not at their safety re-read, set to 60 s here, so only the
// resync can meet the tests' 2 s bounds.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_HUB_CONNECTION_NAME } from '../../src/core/redis/event-hub.js';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, waitFor, type Installation } from '../support/workers.js';

const NO_RE_READ_MS = 60_000;

const suite = useQueueSuite('event-hub');
let admin: Redis | undefined;

beforeAll(() => {
  admin = new Redis(suite.redis.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await admin?.quit();
});

/** The CLIENT LIST lines, one per connection. */
async function clientLines(): Promise<string[]> {
  return ((await admin!.client('LIST')) as string).trim().split('\n');
}

/** The hub's connections (its name), subscribed or not. */
async function hubIds(): Promise<string[]> {
  return (await clientLines())
    .filter((line) => line.includes(` name=${EVENT_HUB_CONNECTION_NAME} `))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)![1]!);
}

/** How many times Redis ran `command` since the last CONFIG RESETSTAT. */
async function calls(command: string): Promise<number> {
  const stats = (await admin!.info('commandstats')) as string;
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats);
  return match ? Number(match[1]) : 0;
}

async function subscribers(channel: string): Promise<number> {
  const [, count] = (await admin!.pubsub('NUMSUB', channel)) as [string, number];
  return count;
}

async function queuedOperation(installation: Installation, project: string): Promise<OperationView> {
  const { operation } = await installation.runtime.operations.create(
    { pluginId: PLUGIN_ID, projectId: project, action: 'append', input: { append: 'never' } },
    ACTOR,
  );
  return operation;
}

/** Follows an operation; `first` resolves at its first state (the subscription is in place then). */
function follow(installation: Installation, id: string, signal: AbortSignal) {
  let started!: () => void;
  const first = new Promise<void>((resolve) => (started = resolve));
  const done = installation.runtime.operations.follow(id, () => started(), {
    signal,
    fallbackReadMs: NO_RE_READ_MS,
  });
  return { first, done };
}

describe('the event hub', () => {
  it('one connection for all followers; a channel subscribed once, unsubscribed after its last follower', async () => {
    const installation = await suite.install('hub-share');
    const { runtime } = installation;
    await installation.addProject('shop');
    const before = (await clientLines()).length;
    const a = await queuedOperation(installation, 'shop');
    const b = await queuedOperation(installation, 'shop');
    const aChannel = runtime.operations.store.eventsChannel(a.id);
    const bChannel = runtime.operations.store.eventsChannel(b.id);
    const stopA = new AbortController();
    const stopRest = new AbortController();
    const followers = [
      ...Array.from({ length: 10 }, () => follow(installation, a.id, stopA.signal)),
      ...Array.from({ length: 10 }, () => follow(installation, b.id, stopRest.signal)),
    ];
    await Promise.all(followers.map((follower) => follower.first));

    expect(await hubIds()).toHaveLength(1);
    // createOperation may have opened a connection of its own (BullMQ): at most the hub's is added for following.
    expect((await clientLines()).length).toBeLessThanOrEqual(before + 2);
    expect(await subscribers(aChannel)).toBe(1);
    expect(await subscribers(bChannel)).toBe(1);
    expect(runtime.events.channelCount).toBe(2);

    stopA.abort();
    await Promise.all(followers.slice(0, 10).map((follower) => follower.done));
    await waitFor('a unsubscribed', async () => (await subscribers(aChannel)) === 0, 5_000, 20);
    expect(await subscribers(bChannel)).toBe(1);

    // b's followers still hear b's channel.
    await runtime.operations.cancel(b.id, ACTOR);
    const ended = await Promise.all(followers.slice(10).map((follower) => follower.done));
    expect(ended.map((view) => view.state)).toEqual(Array(10).fill('cancelled'));
    // Nothing followed: the connection is closed.
    await waitFor('the hub connection closed', async () => (await hubIds()).length === 0, 5_000, 20);
    expect(runtime.events.channelCount).toBe(0);
  });

  it('after its connection is killed, followers re-read as soon as it is back (messages lost meanwhile)', async () => {
    const installation = await suite.install('hub-resync');
    const { runtime } = installation;
    await installation.addProject('shop');
    await installation.addProject('blog');
    const lost = await queuedOperation(installation, 'shop');
    const later = await queuedOperation(installation, 'shop');
    const batch = await runtime.batches.create(PLUGIN_ID, ['blog'], ACTOR);
    const signal = AbortSignal.timeout(10_000);
    const lostFollow = follow(installation, lost.id, signal);
    const laterFollow = follow(installation, later.id, signal);
    let batchStarted!: () => void;
    const batchFirst = new Promise<void>((resolve) => (batchStarted = resolve));
    const batchStates: string[] = [];
    const batchDone = runtime.batches.follow(
      batch.batchId,
      (view) => {
        batchStates.push(view.state);
        batchStarted();
      },
      { signal, fallbackReadMs: NO_RE_READ_MS },
    );
    await Promise.all([lostFollow.first, laterFollow.first, batchFirst]);
    const [hub] = await hubIds();
    expect(hub).toBeDefined();

    // No new connection may be made (the hub's reconnect is refused) while the
    // state changes: their messages are certainly lost to the hub.
    const [, maxclients] = (await admin!.config('GET', 'maxclients')) as [string, string];
    await admin!.config('SET', 'maxclients', String((await clientLines()).length - 1));
    try {
      await admin!.client('KILL', 'ID', hub!);
      await runtime.operations.cancel(lost.id, ACTOR);
      await runtime.batches.cancel(batch.batchId, ACTOR);
      expect(await subscribers(runtime.operations.store.eventsChannel(lost.id))).toBe(0);
      expect(await subscribers(runtime.batches.store.eventsChannel(batch.batchId))).toBe(0);
    } finally {
      await admin!.config('SET', 'maxclients', maxclients);
    }
    const reopened = Date.now();
    const [final, batchFinal] = await Promise.all([lostFollow.done, batchDone]);
    expect(final.state).toBe('cancelled');
    expect(batchFinal?.state).toBe('cancelled');
    expect(batchStates.at(-1)).toBe('cancelled');
    expect(Date.now() - reopened).toBeLessThan(2_000);

    // Subscribed again: a later change arrives as a message.
    await waitFor(
      'the later operation subscribed again',
      async () => (await subscribers(runtime.operations.store.eventsChannel(later.id))) === 1,
      5_000,
      20,
    );
    const cancelledAt = Date.now();
    await runtime.operations.cancel(later.id, ACTOR);
    expect((await laterFollow.done).state).toBe('cancelled');
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
  });

  it('a batch follower re-reads the batch without its results, and ends at once on abort', async () => {
    const installation = await suite.install('follow-no-results');
    await Promise.all(['a', 'b', 'c'].map((id) => installation.addProject(id)));
    // No worker: the batch stays pending, so every read the follower makes is a re-read.
    const batch = await installation.runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    await admin!.config('RESETSTAT');
    const stop = new AbortController();
    let views = 0;
    const done = installation.runtime.batches.follow(batch.batchId, () => views++, {
      signal: stop.signal,
      fallbackReadMs: 20,
    });
    await waitFor('ten re-reads of the batch', async () => (await calls('hgetall')) >= 10);
    const aborted = Date.now();
    stop.abort();
    const last = await done;
    expect(Date.now() - aborted).toBeLessThan(500);
    expect(views).toBe(1);
    expect(last.results).toBeUndefined();
    // The results hash is read only for a finished batch.
    expect(await calls('hvals')).toBe(0);
  });

  it('a closed runtime refuses to follow', async () => {
    const installation = await suite.install('hub-closed');
    await installation.runtime.events.close();
    await expect(
      installation.runtime.events.subscribe('x', { onMessage() {}, onResync() {} }),
    ).rejects.toThrow(/closed/);
  });
});
