// Following an operation (operation-follow.ts): its transition and cancel
// scripts publish each new state, so a follower hears running and the end at
// once. The safety re-read is set to 60 s here: a state that is not published
// would only arrive after it, and the tests' 2 s bounds fail.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OperationView } from '../../src/core/work/operations/operation-store.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  ACTOR,
  PLUGIN_ID,
  createInstallation,
  killAllSpawned,
  startWorker,
  type Installation,
} from '../support/workers.js';

const NO_RE_READ_MS = 60_000;

let redis: OwnedRedis | undefined;
let installation: Installation | undefined;

beforeAll(async () => {
  redis = await startOwnedRedis();
});
afterEach(async () => {
  await killAllSpawned();
  await installation?.close();
  installation = undefined;
});
afterAll(async () => {
  await redis?.stop();
});

/** Each state the follow reported, with when it arrived (ms since the epoch). */
interface Seen {
  state: string;
  at: number;
  view: OperationView;
}

describe('followOperation', () => {
  it('hears running and the end state as they are written, and waitOperation hears the end too', async () => {
    installation = await createInstallation(redis!.url, 'op-follow-run');
    const { runtime } = installation;
    await installation.addProject('shop');
    await startWorker(installation);
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'shop', action: 'append', input: { append: 'x', sleepMs: 1_000 } },
      ACTOR,
    );
    const seen: Seen[] = [];
    const signal = AbortSignal.timeout(20_000);
    const [final, waited] = await Promise.all([
      runtime.operations.follow(
        operation.id,
        (view) => seen.push({ state: view.state, at: Date.now(), view }),
        { signal, fallbackReadMs: NO_RE_READ_MS },
      ),
      runtime.operations.wait(operation.id, { signal, pollMs: NO_RE_READ_MS }),
    ]);
    const waitedAt = Date.now();

    expect(final.state).toBe('succeeded');
    expect(waited.state).toBe('succeeded');
    const states = seen.map((entry) => entry.state);
    expect(['queued', 'running']).toContain(states[0]);
    expect(states.slice(-2)).toEqual(['running', 'succeeded']);
    const running = seen.find((entry) => entry.state === 'running')!;
    const succeeded = seen.at(-1)!;
    expect(succeeded.view).toEqual(final);
    expect(running.at - Date.parse(running.view.startedAt!)).toBeLessThan(2_000);
    expect(succeeded.at - Date.parse(final.finishedAt!)).toBeLessThan(2_000);
    expect(waitedAt - Date.parse(final.finishedAt!)).toBeLessThan(2_000);
  });

  it('hears a queued operation cancelled (no worker running) at once', async () => {
    installation = await createInstallation(redis!.url, 'op-follow-cancel');
    const { runtime } = installation;
    await installation.addProject('shop');
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'shop', action: 'append', input: { append: 'never' } },
      ACTOR,
    );
    const seen: string[] = [];
    let subscribed!: () => void;
    const firstState = new Promise<void>((resolve) => (subscribed = resolve));
    const following = runtime.operations.follow(
      operation.id,
      (view) => {
        seen.push(view.state);
        subscribed();
      },
      { signal: AbortSignal.timeout(20_000), fallbackReadMs: NO_RE_READ_MS },
    );
    // The first state is reported after the subscription: the cancel cannot slip before it.
    await firstState;
    const cancelledAt = Date.now();
    await runtime.operations.cancel(operation.id, ACTOR);
    const final = await following;

    expect(final.state).toBe('cancelled');
    expect(seen).toEqual(['queued', 'cancelled']);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
  });

  it('an unknown operation: NotFoundError, and no subscriber left open', async () => {
    installation = await createInstallation(redis!.url, 'op-follow-unknown');
    const { runtime } = installation;
    const before = await clients(installation);
    await expect(runtime.operations.follow('op_nope', () => {})).rejects.toThrow(/unknown operation/);
    // disconnect() is asynchronous on the server's side.
    for (let tries = 0; tries < 50 && (await clients(installation)) > before; tries++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await clients(installation)).toBe(before);
  });
});

async function clients(inst: Installation): Promise<number> {
  const list = (await inst.runtime.redis.client('LIST')) as string;
  return list.trim().split('\n').length;
}
