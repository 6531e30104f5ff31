// switchyard webhook …: webhooks (admin) — an http(s) URL told of batch ends,
// new failures, changed facts, failed schedule runs and finished operations,
// each delivery signed with a secret read from a file (never from argv), and
// the deliveries with every attempt.
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { InvalidInputError } from '../../core/platform/index.js';
import {
  checkWebhookSecret,
  checkWebhookUrl,
  parseWebhookEvents,
  WEBHOOK_EVENTS,
  type DeliveryView,
} from '../../core/work/notify/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, printTable, say } from '../output.js';

const asArgument =
  <T>(parse: (value: string) => T) =>
  (value: string): T => {
    try {
      return parse(value);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };

export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description('webhooks: signed HTTP notices of batch ends, new failures, changed facts (admin)')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard webhook add --url https://ci.example/hook --events batch.finished,facts.changed --secret-file ./hook.secret\n  switchyard webhook list\n  switchyard webhook deliveries',
    );
  webhook
    .command('add')
    .description('add a webhook; each delivery carries X-Switchyard-Signature-256: sha256=<HMAC of the body>')
    // The program's global --url (the API) takes `--url` wherever it stands: here it is the webhook's.
    .option(
      '--url <url>',
      "required: the webhook's URL, http:// or https:// (here --url is not the API: use --profile or SWITCHYARD_URL)",
    )
    .requiredOption(
      '--events <names>',
      `comma-separated: ${WEBHOOK_EVENTS.join(', ')}`,
      asArgument((value) => parseWebhookEvents(value)),
    )
    .option('--plugin <id>', "only this plugin's batches, operations and schedules")
    .requiredOption(
      '--secret-file <file>',
      'a file holding the signing secret (one line; never given on the command line)',
    )
    .addHelpText(
      'after',
      '\nExample:\n  switchyard webhook add --url https://ci.example/hook --events batch.finished,batch.new-failures --plugin fixture-inspector --secret-file ./hook.secret',
    )
    .action(
      async (
        options: { url?: string; events: string[]; plugin?: string; secretFile: string },
        command: Command,
      ) => {
        const program = command.parent!.parent!;
        const given = options.url ?? (program.getOptionValue('url') as string | undefined);
        if (given === undefined)
          throw new InvalidInputError('webhook add needs --url <url>: where to POST the events');
        const url = checkWebhookUrl(given);
        program.setOptionValue('url', undefined);
        return withBackend(command, async ({ config, backend }) => {
          let text: string;
          try {
            text = await readFile(options.secretFile, 'utf8');
          } catch (error) {
            throw new InvalidInputError(
              `--secret-file ${JSON.stringify(options.secretFile)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); put the secret in a file you can read`,
            );
          }
          const created = await backend.webhooks.add({
            url,
            events: options.events,
            ...(options.plugin ? { pluginId: options.plugin } : {}),
            secret: checkWebhookSecret(text),
          });
          emit(config.json, created, () =>
            say(`webhook ${created.id} added: ${created.events.join(', ')} → ${created.url}`),
          );
        });
      },
    );
  webhook
    .command('list')
    .description('all webhooks (never their secrets)')
    .addHelpText('after', '\nExample:\n  switchyard webhook list --json')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const hooks = await backend.webhooks.list();
        emit(config.json, hooks, () =>
          printTable(
            ['ID', 'URL', 'EVENTS', 'PLUGIN', 'BY', 'CREATED'],
            hooks.map((hook) => [
              hook.id,
              hook.url,
              hook.events.join(','),
              hook.pluginId ?? '*',
              hook.createdBy,
              ago(hook.createdAt) ?? hook.createdAt,
            ]),
          ),
        );
      }),
    );
  webhook
    .command('remove <id>')
    .description('remove a webhook; its deliveries not yet made are dropped')
    .addHelpText('after', '\nExample:\n  switchyard webhook remove wh_0123456789ab')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const removed = await backend.webhooks.remove(id);
        emit(config.json, removed, () => say(`webhook ${removed.id} removed`));
      }),
    );
  webhook
    .command('deliveries [id]')
    .description("the newest deliveries (of every webhook, or one's), each attempt's status and time")
    .addHelpText('after', '\nExample:\n  switchyard webhook deliveries wh_0123456789ab --json')
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
}

function lastAttempt(delivery: DeliveryView): string {
  const last = delivery.attempts.at(-1);
  if (!last) return '-';
  const answer = last.statusCode !== undefined ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer');
  return `${answer} in ${last.durationMs} ms`;
}
