// switchyard webhook deliveries | delivery show | redeliver | ping: what was
// sent and what each receiver answered (its status, a few headers and the
// start of its body, escaped and redacted when stored), a delivery sent
// again, and a test event.
import type { Command } from 'commander';
import type { DeliveryRecord, DeliveryView } from '../../core/work/notify/index.js';
import type { Backend } from '../backend.js';
import { withBackend } from '../command-context.js';
import { ago, emit, note, printFields, printTable, say } from '../output.js';

export function registerDeliveryCommands(webhook: Command): void {
  webhook
    .command('deliveries [id]')
    .description("the newest deliveries (of every webhook, or one's), each attempt's status and answer")
    .addHelpText(
      'after',
      '\nExample:\n  switchyard webhook deliveries wh_0123456789ab --json\n  switchyard webhook delivery show <delivery-id>',
    )
    .action(async (id: string | undefined, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const deliveries = await backend.webhooks.deliveries(id);
        emit(config.json, deliveries, () =>
          printTable(
            ['DELIVERY', 'WEBHOOK', 'EVENT', 'STATE', 'ATTEMPTS', 'LAST', 'CREATED'],
            deliveries.map((delivery) => [
              delivery.deliveryId,
              delivery.webhookId,
              delivery.event,
              delivery.state,
              String(delivery.attempts.length),
              lastAttempt(delivery),
              ago(delivery.createdAt) ?? delivery.createdAt,
            ]),
          ),
        );
      }),
    );
  webhook
    .command('delivery')
    .description('one delivery: `delivery show <delivery-id>`')
    .addHelpText('after', '\nExample:\n  switchyard webhook delivery show 3f2a9c0d11e4b7a8-wh_0123456789ab')
    .command('show <delivery-id>')
    .description(
      "one delivery: its headers and body as signed and sent, each attempt with the receiver's answer",
    )
    .addHelpText('after', '\nExample:\n  switchyard webhook delivery show 3f2a9c0d11e4b7a8-wh_0123456789ab')
    .action(async (deliveryId: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const record = await backend.webhooks.delivery(deliveryId);
        emit(config.json, record, () => printDelivery(record));
      }),
    );
  webhook
    .command('redeliver <delivery-id>')
    .description(
      "send a delivered or failed delivery's event again (a new delivery id, X-Switchyard-Redelivery-Of the old one)",
    )
    .addHelpText('after', '\nExample:\n  switchyard webhook redeliver 3f2a9c0d11e4b7a8-wh_0123456789ab')
    .action(async (deliveryId: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const record = await backend.webhooks.redeliver(deliveryId);
        emit(config.json, record, () => queued(record, `redelivery of ${deliveryId}`));
        await warnWithoutWorkers(backend);
      }),
    );
  webhook
    .command('ping <id>')
    .description('queue a signed `ping` event to a webhook (active or not): a test of its receiver')
    .addHelpText('after', '\nExample:\n  switchyard webhook ping wh_0123456789ab')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const record = await backend.webhooks.ping(id);
        emit(config.json, record, () => queued(record, 'ping'));
        await warnWithoutWorkers(backend);
      }),
    );
}

/** A worker sends deliveries (each runs every queue's consumers): none running, the delivery waits, said. */
async function warnWithoutWorkers(backend: Backend): Promise<void> {
  if ((await backend.work.workersConsuming('operate').catch(() => undefined)) === 0)
    note(
      'no worker is running: the delivery is sent once one starts (`switchyard worker` or `switchyard up`)',
    );
}

function queued(record: DeliveryRecord, what: string): void {
  say(
    `${what} queued as delivery ${record.deliveryId} → ${record.url}; a worker sends it (switchyard webhook delivery show ${record.deliveryId})`,
  );
}

function lastAttempt(delivery: DeliveryView): string {
  const last = delivery.attempts.at(-1);
  if (!last) return '-';
  const answer = last.statusCode !== undefined ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer');
  const excerpt = last.response?.body.replace(/\s+/g, ' ').trim().slice(0, 40);
  return `${answer} in ${last.durationMs} ms${excerpt ? ` ${JSON.stringify(excerpt)}` : ''}`;
}

function printDelivery(record: DeliveryRecord): void {
  printFields([
    ['Delivery', record.deliveryId],
    ['Webhook', record.webhookId],
    ['Event', record.event],
    ['URL', record.url],
    ['State', record.state],
    ['Created', record.createdAt],
    ['Redelivery of', record.redeliveryOf],
  ]);
  sayLines(`\nBody (as signed and sent):\n${indent(prettyBody(record.body))}`);
  record.attempts.forEach((attempt, index) => {
    sayLines(
      `\nAttempt ${index + 1} at ${attempt.at}: ${attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : 'no answer'} in ${attempt.durationMs} ms${attempt.error ? ` — ${attempt.error}` : ''}`,
    );
    const answer = attempt.response;
    if (!answer) return;
    for (const [name, value] of Object.entries(answer.headers)) say(`  ${name}: ${value}`);
    if (answer.body !== '')
      sayLines(`  body${answer.truncated ? ' (the start only)' : ''}:\n${indent(answer.body, '    ')}`);
  });
  if (record.attempts.length === 0) sayLines('\nNo attempt yet: a worker sends it.');
}

/** Each line on its own (say() escapes a line break): every line stays terminal-safe. */
function sayLines(text: string): void {
  for (const line of text.split('\n')) say(line);
}

function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((line) => `${by}${line}`)
    .join('\n');
}
