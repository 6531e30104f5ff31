// The gate that holds new inspection calls while operations run: released when
// the last operation ends, bounded however many operations overlap, followed by
// a pause after a hold that ran its full length, inert after close. Real timers, no Redis (the
// cross-process behaviour is in test/queue/priority.test.ts).
import { describe, expect, it } from 'vitest';
import { OperationPriority } from '../../src/worker/operation-priority.js';
import { operationActivityMessage, type OperationActivity } from '../../src/core/work/operations/index.js';
import { sleep } from '../support/wait.js';

/** What the worker hears on the activity channel, through its codec. */
function heard(activity: OperationActivity): OperationActivity {
  return operationActivityMessage.decode(operationActivityMessage.encode(activity))!;
}
const startedMessage = (operationId: string) => heard({ kind: 'started', operationId });
const endedMessage = (operationId: string) => heard({ kind: 'ended', operationId });

/** Milliseconds until `clear()` resolves. */
async function waitedMs(priority: OperationPriority, signal?: AbortSignal): Promise<number> {
  const started = performance.now();
  await priority.clear(signal);
  return performance.now() - started;
}

describe('OperationPriority', () => {
  it('holds from "started" until the last overlapping operation has "ended"', async () => {
    const priority = new OperationPriority(5_000);
    expect(await waitedMs(priority)).toBeLessThan(200);
    priority.hear(startedMessage('a'));
    priority.hear(startedMessage('b'));
    setTimeout(() => priority.hear(endedMessage('a')), 100);
    setTimeout(() => priority.hear(endedMessage('b')), 250);
    const waited = await waitedMs(priority);
    expect(waited).toBeGreaterThanOrEqual(240);
    expect(waited).toBeLessThan(2_000);
    priority.close();
  });

  it('one hold lasts at most holdMs even when operations keep overlapping', async () => {
    const priority = new OperationPriority(300);
    priority.hear(startedMessage('first'));
    // A new operation starts before each previous one ends: the set is never empty.
    const overlap = setInterval(() => priority.hear(startedMessage(`op-${performance.now()}`)), 50);
    const waited = await waitedMs(priority);
    clearInterval(overlap);
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(2_000);
    priority.close();
  });

  it('after a hold that ran its full length, new operations are ignored for as long, then held again', async () => {
    const priority = new OperationPriority(200);
    priority.hear(startedMessage('long'));
    await priority.clear();
    priority.hear(startedMessage('next'));
    expect(priority.holding).toBe(false);
    await sleep(260);
    priority.hear(startedMessage('later'));
    expect(priority.holding).toBe(true);
    priority.hear(endedMessage('later'));
    expect(priority.holding).toBe(false);
    // An operation that ended normally leaves no pause: the next one is held at once.
    priority.hear(startedMessage('after'));
    expect(priority.holding).toBe(true);
    priority.close();
  });

  it('0 turns it off; close releases waiters and ignores what comes after; an aborted wait returns', async () => {
    const off = new OperationPriority(0);
    off.hear(startedMessage('x'));
    expect(off.holding).toBe(false);

    const priority = new OperationPriority(10_000);
    priority.hear(startedMessage('x'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(await waitedMs(priority, controller.signal)).toBeLessThan(2_000);
    expect(priority.holding).toBe(true);
    setTimeout(() => priority.close(), 50);
    expect(await waitedMs(priority)).toBeLessThan(2_000);
    priority.hear(startedMessage('y'));
    expect(priority.holding).toBe(false);
  });
});
