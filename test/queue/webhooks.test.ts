// Webhooks delivered by real worker processes to a real HTTP receiver on
// loopback: batch.finished, facts.changed and batch.new-failures after two
// batches whose facts changed for some projects, each signed (HMAC-SHA256 of
// the raw body with the secret); a 500 answered once is retried; a worker
// killed with SIGKILL mid-delivery loses no delivery.
import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryView } from '../../src/core/work/notify/index.js';
import { BatchStore } from '../../src/core/work/batches/index.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { closeReceivers, startReceiver, type Received } from '../support/webhook-receiver.js';
import {
  ACTOR,
  PLUGIN_ID,
  kill9,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
} from '../support/workers.js';

const suite = useQueueSuite('webhooks');
const SECRET = 'webhook-secret-for-the-test-0123456789';

afterEach(closeReceivers);

const verify = (entry: Received) =>
  expect(entry.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(entry.raw).digest('hex')}`);

async function deliveriesOf(installation: Installation, webhookId: string): Promise<DeliveryView[]> {
  return installation.runtime.webhooks.deliveries(webhookId);
}

describe('webhooks', () => {
  it('two batches with changed facts: batch.finished, facts.changed and batch.new-failures arrive signed', async () => {
    const installation = await suite.install('webhooks-facts');
    const { runtime } = installation;
    const roots = new Map<string, string>();
    for (const name of ['alpha', 'beta', 'gamma', 'delta'])
      roots.set(name, await installation.addProject(name));
    const receiver = await startReceiver();
    const hook = await runtime.webhooks.add(
      {
        url: receiver.url,
        events: ['batch.finished', 'facts.changed', 'batch.new-failures'],
        secret: SECRET,
      },
      ACTOR,
    );
    await startWorker(installation);

    const first = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    await untilBatchFinished(runtime, first.batchId, { timeoutMs: 30_000 });
    await waitFor('batch.finished of the first batch', async () => receiver.received.length >= 1, 15_000);
    // The first batch has nothing to compare with: only batch.finished.
    expect(receiver.received.map((entry) => entry.event)).toEqual(['batch.finished']);

    // Between the batches: two projects' facts change, one project starts failing.
    await writeFile(join(roots.get('alpha')!, 'facts.json'), JSON.stringify({ go: '1.22' }));
    await writeFile(join(roots.get('gamma')!, 'facts.json'), JSON.stringify({ go: '1.19' }));
    await writeFile(join(roots.get('delta')!, 'inspect-error'), '');
    const second = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    await untilBatchFinished(runtime, second.batchId, { timeoutMs: 30_000 });
    await waitFor('three events of the second batch', async () => receiver.received.length >= 4, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more arrives
    expect(receiver.received).toHaveLength(4);

    for (const entry of receiver.received) {
      verify(entry);
      expect(entry.body.event).toBe(entry.event);
      expect(entry.body.deliveryId).toBe(entry.delivery);
    }
    const byEvent = (event: string) => receiver.received.filter((entry) => entry.event === event);
    const finished = byEvent('batch.finished').map((entry) => entry.body.data.batch as { batchId: string });
    expect(finished.map((batch) => batch.batchId)).toEqual([first.batchId, second.batchId]);
    const [changed] = byEvent('facts.changed');
    expect(changed!.body.data.previousBatchId).toBe(first.batchId);
    const changedProjects = changed!.body.data.projects as { projectId: string; added: { id: string }[] }[];
    expect(changedProjects.map((project) => project.projectId).sort()).toEqual(['alpha', 'gamma']);
    expect(changedProjects[0]!.added.map((fact) => fact.id)).toContain('go');
    const [failures] = byEvent('batch.new-failures');
    expect(
      (failures!.body.data.projects as { projectId: string }[]).map((project) => project.projectId),
    ).toEqual(['delta']);

    const deliveries = await deliveriesOf(installation, hook.id);
    expect(deliveries).toHaveLength(4);
    for (const delivery of deliveries) {
      expect(delivery.state).toBe('delivered');
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]!.statusCode).toBe(200);
    }
  }, 90_000);

  it('a batch over part of the fleet, and the full one after it, compare each project with its own previous result', async () => {
    const installation = await suite.install('webhooks-partial');
    const { runtime } = installation;
    const roots = new Map<string, string>();
    for (const name of ['alpha', 'beta', 'gamma', 'delta'])
      roots.set(name, await installation.addProject(name));
    const receiver = await startReceiver();
    await runtime.webhooks.add(
      {
        url: receiver.url,
        events: ['batch.finished', 'facts.changed', 'batch.new-failures'],
        secret: SECRET,
      },
      ACTOR,
    );
    await startWorker(installation);
    const finished = async (batchId: string, events: number) => {
      await untilBatchFinished(runtime, batchId, { timeoutMs: 30_000 });
      await waitFor(`${events} events`, async () => receiver.received.length >= events, 15_000);
    };
    await writeFile(join(roots.get('beta')!, 'facts.json'), JSON.stringify({ go: '1.21' }));
    await finished((await runtime.batches.create(PLUGIN_ID, 'all', ACTOR)).batchId, 1);
    // Only alpha, whose facts changed: the three others are not "gone".
    await writeFile(join(roots.get('alpha')!, 'facts.json'), JSON.stringify({ go: '1.22' }));
    const part = await runtime.batches.create(PLUGIN_ID, ['alpha'], ACTOR);
    expect(part.partial).toBe(true);
    await finished(part.batchId, 3);
    // The whole fleet again, beta changed: compared with beta's own result in the first batch.
    await writeFile(join(roots.get('beta')!, 'facts.json'), JSON.stringify({ go: '1.23' }));
    await finished((await runtime.batches.create(PLUGIN_ID, 'all', ACTOR)).batchId, 5);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more arrives
    const changed = receiver.received
      .filter((entry) => entry.event === 'facts.changed')
      .map(
        (entry) =>
          entry.body.data.projects as { projectId: string; changed: { from: string; to: string }[] }[],
      );
    expect(changed.map((projects) => projects.map((project) => project.projectId))).toEqual([
      ['alpha'],
      ['beta'],
    ]);
    expect(changed[1]![0]!.changed).toEqual([expect.objectContaining({ from: '1.21', to: '1.23' })]);
    expect(receiver.received.map((entry) => entry.event)).toEqual([
      'batch.finished',
      'batch.finished',
      'facts.changed',
      'batch.finished',
      'facts.changed',
    ]);
  });

  it('an event is produced once, however many processes see it', async () => {
    const installation = await suite.install('webhooks-once');
    const receiver = await startReceiver();
    await installation.runtime.webhooks.add(
      { url: receiver.url, events: ['batch.finished'], secret: SECRET },
      ACTOR,
    );
    const publish = () =>
      installation.runtime.webhooks.publish('batch.finished', { batch: { batchId: 'b1' } }, { key: 'b1' });
    expect(await Promise.all([publish(), publish(), publish()])).toEqual(expect.arrayContaining([1, 0, 0]));
    // The body passes through the API's redaction: a token in a fact's value never leaves.
    const leaked = `sy_${'a1b2c3'.repeat(2)}_${'Zx9'.repeat(14)}q`;
    await installation.runtime.webhooks.publish(
      'batch.finished',
      { batch: { batchId: 'b3' }, note: `token ${leaked} in a plugin's output` },
      { key: 'b3' },
    );
    const [newest] = await installation.runtime.webhooks.deliveries();
    const record = await installation.runtime.webhooks.delivery(newest!.deliveryId);
    expect(record!.body).not.toContain(leaked);
    expect(record!.body).toContain('[REDACTED]');
  });

  it('a receiver that answers 500 once gets the same delivery again, and the attempts are recorded', async () => {
    const installation = await suite.install('webhooks-retry');
    const receiver = await startReceiver((_entry, index, response) =>
      response.writeHead(index === 0 ? 500 : 204).end(),
    );
    const hook = await installation.runtime.webhooks.add(
      { url: receiver.url, events: ['batch.finished'], secret: SECRET },
      ACTOR,
    );
    await startWorker(installation);
    await installation.runtime.webhooks.publish(
      'batch.finished',
      { batch: { batchId: 'b2' } },
      { key: 'b2' },
    );
    const [delivery] = await waitFor(
      'the delivery to succeed on its second attempt',
      async () => {
        const found = await deliveriesOf(installation, hook.id);
        return found[0]?.state === 'delivered' ? found : undefined;
      },
      20_000,
    );
    expect(delivery!.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 204]);
    expect(delivery!.attempts[0]!.error).toMatch(/HTTP 500/);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.delivery).toBe(receiver.received[0]!.delivery);
    expect(receiver.received[1]!.raw).toBe(receiver.received[0]!.raw);
    receiver.received.forEach(verify);
  }, 40_000);

  it('a worker killed with SIGKILL mid-delivery loses no delivery: another worker delivers it', async () => {
    const installation = await suite.install('webhooks-kill');
    let held: ServerResponse | undefined;
    const receiver = await startReceiver((_entry, index, response) => {
      // The first request is never answered: its worker is killed while it waits.
      if (index === 0) held = response;
      else response.writeHead(200).end();
    });
    const hook = await installation.runtime.webhooks.add(
      { url: receiver.url, events: ['operation.finished'], secret: SECRET },
      ACTOR,
    );
    const victim = await startWorker(installation);
    await installation.runtime.webhooks.publish(
      'operation.finished',
      { operation: { id: 'op-1' } },
      { key: 'op-1' },
    );
    await waitFor(
      'the first attempt to reach the receiver',
      async () => receiver.received.length >= 1,
      15_000,
    );
    await kill9(victim);
    held?.destroy();
    await startWorker(installation);
    const [delivery] = await waitFor(
      'another worker to deliver it',
      async () => {
        const found = await deliveriesOf(installation, hook.id);
        return found[0]?.state === 'delivered' ? found : undefined;
      },
      30_000,
    );
    expect(receiver.received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(receiver.received.map((entry) => entry.delivery)).size).toBe(1);
    receiver.received.forEach(verify);
    // The killed attempt left no record; the delivering one did.
    expect(delivery!.attempts.at(-1)!.statusCode).toBe(200);
  }, 60_000);

  it('a finished operation and a failed schedule run are told, to the webhooks of their plugin only', async () => {
    const installation = await suite.install('webhooks-ops');
    const { runtime } = installation;
    await installation.addProject('shop');
    const receiver = await startReceiver();
    const other = await startReceiver();
    await runtime.webhooks.add(
      {
        url: receiver.url,
        events: ['operation.finished', 'schedule.failed'],
        pluginId: PLUGIN_ID,
        secret: SECRET,
      },
      ACTOR,
    );
    await runtime.webhooks.add(
      {
        url: other.url,
        events: ['operation.finished', 'schedule.failed'],
        pluginId: 'another-plugin',
        secret: SECRET,
      },
      ACTOR,
    );
    await startWorker(installation);
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'shop', action: 'append', input: { append: 'hello' } },
      ACTOR,
    );
    await waitFor('operation.finished', async () => receiver.received.length >= 1, 20_000);
    expect(receiver.received[0]!.event).toBe('operation.finished');
    expect(receiver.received[0]!.body.data.operation).toMatchObject({ id: operation.id, state: 'succeeded' });

    // A schedule whose plugin is disabled afterwards: its next run cannot start a batch.
    const schedule = await runtime.schedules.add(
      { pluginId: PLUGIN_ID, projects: 'all', everyMs: 3_600_000 },
      ACTOR,
    );
    await runtime.plugins.disable(PLUGIN_ID, ACTOR);
    await runtime.queues.maintenance.add('recurring', {
      task: 'recurring-inspection',
      scheduleId: schedule.id,
    });
    await waitFor(
      'schedule.failed',
      async () => receiver.received.some((entry) => entry.event === 'schedule.failed'),
      20_000,
    );
    const failed = receiver.received.find((entry) => entry.event === 'schedule.failed')!;
    expect(failed.body.data).toMatchObject({
      schedule: { id: schedule.id, pluginId: PLUGIN_ID },
      error: { code: 'PLUGIN_DISABLED' },
    });
    receiver.received.forEach(verify);
    expect(other.received).toEqual([]);
  }, 60_000);

  it('an operation cancelled while queued is told too (it never reaches a worker)', async () => {
    const installation = await suite.install('webhooks-cancel-queued');
    const { runtime } = installation;
    await installation.addProject('shop');
    const receiver = await startReceiver();
    await runtime.webhooks.add({ url: receiver.url, events: ['operation.finished'], secret: SECRET }, ACTOR);
    // No worker yet: the operation stays queued until cancelled.
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'shop', action: 'append', input: { append: 'never' } },
      ACTOR,
    );
    expect((await runtime.operations.cancel(operation.id, ACTOR)).state).toBe('cancelled');
    await startWorker(installation); // delivers what was queued for the receiver
    await waitFor('operation.finished', async () => receiver.received.length >= 1, 20_000);
    expect(receiver.received[0]!.body.data.operation).toMatchObject({ id: operation.id, state: 'cancelled' });
    verify(receiver.received[0]!);
  }, 60_000);

  it('a batch end recorded but not announced (its worker died in between) is announced when seen again, once', async () => {
    const installation = await suite.install('webhooks-recover');
    const { runtime } = installation;
    await installation.addProject('one');
    await installation.addProject('two');
    const receiver = await startReceiver();
    const hook = await runtime.webhooks.add(
      { url: receiver.url, events: ['batch.finished'], secret: SECRET },
      ACTOR,
    );
    const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    await runtime.queues.inspect.obliterate({ force: true });
    // What a worker killed right after recording the last outcome leaves: the end, no event.
    const bare = new BatchStore(runtime.redis, runtime.keys);
    for (const projectId of ['one', 'two'])
      await bare.record(batch.batchId, PLUGIN_ID, {
        projectId,
        status: 'failed',
        error: { code: 'X', message: 'x' },
      });
    expect((await runtime.batches.get(batch.batchId, { results: false })).state).toBe('failed');
    expect(await deliveriesOf(installation, hook.id)).toEqual([]);

    await startWorker(installation);
    await runtime.batches.store.announceIfEnded(batch.batchId);
    await runtime.batches.store.announceIfEnded(batch.batchId);
    await waitFor('batch.finished', async () => receiver.received.length >= 1, 15_000);
    await waitFor(
      'delivered',
      async () => (await deliveriesOf(installation, hook.id))[0]?.state === 'delivered',
    );
    await runtime.batches.store.announceIfEnded(batch.batchId);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
    expect(await deliveriesOf(installation, hook.id)).toHaveLength(1);
  }, 40_000);
});
