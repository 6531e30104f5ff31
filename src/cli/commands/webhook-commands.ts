// switchyard webhook …: webhooks (admin) — an http(s) URL told of batch ends,
// new failures, changed facts, failed schedule runs and finished operations,
// each delivery signed with a secret read from a file (never from argv): add,
// edit, rotate-secret, list, remove. The deliveries, ping and redeliver are in
// webhook-delivery-commands.ts.
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { InvalidInputError } from '../../core/platform/index.js';
import {
  checkWebhookSecret,
  checkWebhookUrl,
  MAX_ROTATION_WINDOW_MS,
  parseWebhookEvents,
  WEBHOOK_EVENTS,
} from '../../core/work/notify/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, printTable, say } from '../output.js';
import { durationIn } from '../parse.js';
import { registerDeliveryCommands } from './webhook-delivery-commands.js';

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
      '\nExamples:\n  switchyard webhook add --url https://ci.example/hook --events batch.finished,facts.changed --secret-file ./hook.secret\n  switchyard webhook list\n  switchyard webhook ping wh_0123456789ab\n  switchyard webhook deliveries',
    );
  registerAdd(webhook);
  registerEdit(webhook);
  registerRotateSecret(webhook);
  registerListAndRemove(webhook);
  registerDeliveryCommands(webhook);
}

/**
 * The webhook's --url: the program's global --url takes it wherever it stands.
 * `add` needs one, so any --url is the webhook's; for `edit` only one written
 * after `edit` is (one before `webhook` stays the API's, or an edit would move
 * the webhook to the API).
 */
function webhookUrl(options: { url?: string }, command: Command, onlyAfter?: string): string | undefined {
  const program = command.parent!.parent!;
  if (options.url !== undefined) return checkWebhookUrl(options.url);
  const given = program.getOptionValue('url') as string | undefined;
  if (given === undefined) return undefined;
  if (onlyAfter !== undefined) {
    const args = (program as Command & { rawArgs?: string[] }).rawArgs ?? [];
    const at = args.indexOf(onlyAfter, args.indexOf('webhook') + 1);
    const after = args.slice(at + 1).some((arg) => arg === '--url' || arg.startsWith('--url='));
    if (at < 0 || !after) return undefined;
  }
  program.setOptionValue('url', undefined);
  return checkWebhookUrl(given);
}

async function readSecretFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new InvalidInputError(
      `--secret-file ${JSON.stringify(file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); put the secret in a file you can read`,
    );
  }
  return checkWebhookSecret(text);
}

function registerAdd(webhook: Command): void {
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
        const url = webhookUrl(options, command);
        if (url === undefined)
          throw new InvalidInputError('webhook add needs --url <url>: where to POST the events');
        return withBackend(command, async ({ config, backend }) => {
          const created = await backend.webhooks.add({
            url,
            events: options.events,
            ...(options.plugin ? { pluginId: options.plugin } : {}),
            secret: await readSecretFile(options.secretFile),
          });
          emit(config.json, created, () =>
            say(`webhook ${created.id} added: ${created.events.join(', ')} → ${created.url}`),
          );
        });
      },
    );
}

function registerEdit(webhook: Command): void {
  webhook
    .command('edit <id>')
    .description("change a webhook's URL, events, or whether it is active (what is not given stays)")
    .option('--url <url>', 'the new URL, http:// or https:// (here --url is not the API)')
    .option(
      '--events <names>',
      `comma-separated, replacing the events: ${WEBHOOK_EVENTS.join(', ')}`,
      asArgument((value) => parseWebhookEvents(value)),
    )
    .option('--active', 'deliver new events again')
    .option(
      '--inactive',
      'deliver no new event (ping and redeliver still send); deliveries already queued go',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard webhook edit wh_0123456789ab --url https://ci.example/new-hook\n  switchyard webhook edit wh_0123456789ab --events batch.finished --inactive',
    )
    .action(
      async (
        id: string,
        options: { url?: string; events?: string[]; active?: true; inactive?: true },
        command: Command,
      ) => {
        const url = webhookUrl(options, command, 'edit');
        if (options.active && options.inactive)
          throw new InvalidInputError('give --active or --inactive, not both');
        const active = options.active ? true : options.inactive ? false : undefined;
        return withBackend(command, async ({ config, backend }) => {
          const edited = await backend.webhooks.edit(id, {
            ...(url !== undefined ? { url } : {}),
            ...(options.events ? { events: options.events } : {}),
            ...(active !== undefined ? { active } : {}),
          });
          emit(config.json, edited, () =>
            say(
              `webhook ${edited.id} ${edited.active ? 'active' : 'inactive'}: ${edited.events.join(', ')} → ${edited.url}`,
            ),
          );
        });
      },
    );
}

function registerRotateSecret(webhook: Command): void {
  webhook
    .command('rotate-secret <id>')
    .description(
      'a new signing secret; for --window the old one signs too, in X-Switchyard-Signature-256-Previous',
    )
    .requiredOption('--secret-file <file>', 'a file holding the new secret (one line)')
    .option(
      '--window <duration>',
      'how long the old secret stays valid: 0 (not at all) to 7d; default 24h',
      durationIn(0, MAX_ROTATION_WINDOW_MS, '--window must be a duration from 0 to 7d, as 30m, 24h or 2d'),
    )
    .addHelpText(
      'after',
      '\nExample:\n  switchyard webhook rotate-secret wh_0123456789ab --secret-file ./new-hook.secret --window 2h',
    )
    .action(async (id: string, options: { secretFile: string; window?: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const secret = await readSecretFile(options.secretFile);
        const rotated = await backend.webhooks.rotateSecret(id, secret, options.window);
        emit(config.json, rotated, () =>
          say(
            rotated.previousSecretUntil
              ? `webhook ${rotated.id}: new secret in force; the old one signs too (X-Switchyard-Signature-256-Previous) until ${rotated.previousSecretUntil}`
              : `webhook ${rotated.id}: new secret in force; the old one no longer signs`,
          ),
        );
      }),
    );
}

function registerListAndRemove(webhook: Command): void {
  webhook
    .command('list')
    .description('all webhooks (never their secrets)')
    .addHelpText('after', '\nExample:\n  switchyard webhook list --json')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const hooks = await backend.webhooks.list();
        emit(config.json, hooks, () =>
          printTable(
            ['ID', 'URL', 'EVENTS', 'ACTIVE', 'PLUGIN', 'BY', 'CREATED'],
            hooks.map((hook) => [
              hook.id,
              hook.url,
              hook.events.join(','),
              hook.active ? 'yes' : 'no',
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
}
