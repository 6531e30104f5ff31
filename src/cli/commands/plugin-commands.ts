// switchyard plugin …: review, trust and enable plugins (docs/CLI.md "Plugins").
import type { Command } from 'commander';
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS, type Scope } from '@switchyard/plugin-sdk/protocol';
import { InvalidInputError } from '../../core/platform/index.js';
import type { PluginDetail, PluginView } from '../../core/plugins/index.js';
import type { LogLine } from '../backend.js';
import { routes } from '../../core/contract/index.js';
import { refuseUnlessRole, withBackend } from '../command-context.js';
import { emit, printFields, printJson, printTable, say, whenWithAgo } from '../output.js';
import { collect, listLimit, requireYes } from '../parse.js';
import { containmentText, limitsText, policyText, printLogEntries, untilFollowEnds } from './long-ops.js';

export function registerPluginCommands(program: Command): void {
  const plugin = program
    .command('plugin')
    .description('discover, review, trust and enable plugins')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard plugin list\n  switchyard plugin show fixture-inspector',
    );

  plugin
    .command('refresh')
    .description('rediscover plugin packages in <data-dir>/plugins (never runs them)')
    .addHelpText('after', '\nExample:\n  switchyard plugin refresh')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const plugins = await backend.plugins.refresh();
        emit(config.json, plugins, () => printPluginTable(plugins));
      }),
    );

  plugin
    .command('list')
    .description('one row per plugin: id, version, trust, enabled, health, grants')
    .addHelpText('after', '\nExample:\n  switchyard plugin list --json')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const plugins = await backend.plugins.list();
        emit(config.json, plugins, () => printPluginTable(plugins));
      }),
    );

  plugin
    .command('show <id>')
    .description('everything a reviewer needs, with the full SHA-256 fingerprint')
    .addHelpText('after', '\nExample:\n  switchyard plugin show fixture-inspector')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const detail = await backend.plugins.show(id);
        if (config.json) return printJson({ ...detail, osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT });
        printDetail(detail);
      }),
    );

  plugin
    .command('trust <id>')
    .description('record the exact reviewed fingerprint; the plugin stays disabled')
    .requiredOption('--fingerprint <sha256>', 'the full fingerprint that `plugin show` prints')
    .option('--yes', 'confirm that you reviewed this plugin')
    .addHelpText(
      'after',
      '\nExample:\n  switchyard plugin trust fixture-inspector --fingerprint 3f5a…e1 --yes',
    )
    .action(async (id: string, options: { fingerprint: string; yes?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend, target }) => {
        await refuseUnlessRole(target, routes.trustPlugin, 'plugin trust');
        requireYes(options.yes, `plugin trust ${id} --fingerprint ${options.fingerprint}`);
        if (!/^[0-9a-f]{64}$/.test(options.fingerprint)) {
          throw new InvalidInputError(
            '--fingerprint must be the 64 lower-case hex characters that `plugin show` prints',
          );
        }
        const view = await backend.plugins.trust(id, options.fingerprint);
        // After the decision was accepted: someone whose role may not trust sees only the refusal.
        if (!config.json) process.stderr.write(`${OS_TRUST_BOUNDARY_STATEMENT}\n\n`);
        emit(config.json, view, () =>
          say(
            view.enabled
              ? `${id} was already trusted at ${options.fingerprint}; nothing changed: it stays enabled with ${view.grantedScopes.join(', ')}`
              : `trusted ${id} at ${options.fingerprint}; it stays disabled until you enable it`,
          ),
        );
      }),
    );

  plugin
    .command('enable <id>')
    .description('grant a subset of the requested scopes, after a successful initialize/health exchange')
    .option('--scope <scope>', 'a scope to grant (repeat for several)', collect, [] as string[])
    .option('--yes', 'confirm the grant')
    .addHelpText(
      'after',
      '\nExample:\n  switchyard plugin enable fixture-inspector --scope project.metadata.read --scope project.files.read --yes',
    )
    .action(async (id: string, options: { scope: string[]; yes?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend, target }) => {
        await refuseUnlessRole(target, routes.enablePlugin, 'plugin enable');
        requireYes(
          options.yes,
          `plugin enable ${id} ${options.scope.map((scope) => `--scope ${scope}`).join(' ')}`,
        );
        const view = await backend.plugins.enable(id, options.scope);
        emit(config.json, view, () =>
          say(`enabled ${id} with ${view.grantedScopes.join(', ')} (health: ${view.health})`),
        );
      }),
    );

  plugin
    .command('disable <id>')
    .description('revoke every grant, without running plugin code')
    .addHelpText('after', '\nExample:\n  switchyard plugin disable fixture-inspector')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const view = await backend.plugins.disable(id);
        emit(config.json, view, () => say(`disabled ${id}; all grants revoked`));
      }),
    );

  plugin
    .command('health <id>')
    .description('one supervised health check now')
    .addHelpText('after', '\nExample:\n  switchyard plugin health fixture-inspector')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const health = await backend.plugins.health(id);
        emit(config.json, health, () =>
          say(`${id}: ${health.status}${health.message ? ` — ${health.message}` : ''}`),
        );
      }),
    );

  plugin
    .command('logs <id>')
    .description('newest redacted log entries (plugin stderr, written while calls run, and call failures)')
    .option('--limit <n>', 'how many entries', listLimit('--limit'), 50)
    .option('--follow', 'keep printing new entries as calls write them (Ctrl-C ends it)')
    .option('--operation <opId>', "only that operation's entries (as `op logs`)")
    .addHelpText(
      'after',
      '\nWith --json and --follow: one JSON entry per line.\n\nExamples:\n  switchyard plugin logs fixture-inspector --limit 20\n  switchyard plugin logs fixture-inspector --follow',
    )
    .action(
      async (
        id: string,
        options: { limit: number; follow?: boolean; operation?: string },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          // --follow --json: one JSON entry per line, as each arrives.
          const printLive = (entries: LogLine[]) => printLogEntries(entries, config.json);
          if (options.operation) {
            const operation = await backend.work.getOperation(options.operation);
            if (operation.pluginId !== id)
              throw new InvalidInputError(
                `operation ${operation.id} ran plugin ${operation.pluginId}, not ${id}`,
              );
            if (options.follow)
              return untilFollowEnds((signal) =>
                backend.work.followOperationLogs(operation.id, printLive, { signal }),
              );
            const entries = (await backend.work.operationLogs(operation.id)).slice(-options.limit);
            return config.json ? printJson(entries) : printLogEntries(entries, false);
          }
          if (options.follow)
            return untilFollowEnds((signal) =>
              backend.plugins.followLogs(id, printLive, { limit: options.limit, signal }),
            );
          const logs = await backend.plugins.logs(id, options.limit);
          if (config.json) return printJson(logs);
          if (logs.length === 0) return say(`no log entries for ${id}`);
          printLogEntries([...logs].reverse(), false);
        }),
    );
}

export function printPluginTable(plugins: PluginView[]): void {
  if (plugins.length === 0) {
    process.stdout.write(
      'no plugins found; put packages in <data-dir>/plugins/<package>/ and run `switchyard plugin refresh`\n',
    );
    return;
  }
  printTable(
    ['ID', 'VERSION', 'TRUST', 'ENABLED', 'HEALTH', 'GRANTS', 'NOTE'],
    plugins.map((plugin) => [
      plugin.id,
      plugin.version,
      plugin.trust,
      plugin.enabled ? 'yes' : 'no',
      plugin.health,
      plugin.grantedScopes.join(',') || '-',
      plugin.available ? '' : `unavailable: ${plugin.error ?? ''}`,
    ]),
  );
}

function printDetail(detail: PluginDetail): void {
  printFields([
    ['id', detail.id],
    ['name', detail.name],
    ['version', detail.version],
    ['protocol', detail.protocolVersion],
    ['fingerprint', detail.fingerprint ?? '(cannot be computed)'],
    ['trusted fingerprint', detail.trust === 'changed' ? detail.trustedFingerprint : undefined],
    ['trust', detail.trust === 'changed' ? 'CHANGED since review — review again' : detail.trust],
    ['trusted by', detail.trustedBy ? `${detail.trustedBy} at ${whenWithAgo(detail.trustedAt)}` : undefined],
    ['enabled', detail.enabled ? 'yes' : 'no'],
    ['capabilities', detail.capabilities.join(', ')],
    ['requested scopes', detail.requestedScopes.join(', ') || '(none)'],
    ['granted scopes', detail.grantedScopes.join(', ') || '(none)'],
    ['health', detail.health],
    ['last error', detail.lastError],
    ['available', detail.available ? 'yes' : `no — ${detail.error}`],
    ['manifest', detail.manifestPath],
    ['executable', detail.executable],
    ['package digest', detail.treeDigest ?? '(cannot be computed)'],
    [
      'trusted package digest',
      detail.trustedTreeDigest && detail.trustedTreeDigest !== detail.treeDigest
        ? detail.trustedTreeDigest
        : undefined,
    ],
    ['changed files', detail.changedFiles?.join(', ')],
    ['time limits', limitsText(detail)],
    ['call policy', policyText(detail)],
    [`containment (as seen by ${detail.containment.seenBy})`, containmentText(detail)],
  ]);
  printPackageFiles(detail);
  process.stdout.write('\nwhat the requested scopes allow:\n');
  for (const scope of detail.requestedScopes)
    say(`  ${scope}: ${SCOPE_DESCRIPTIONS[scope as Scope] ?? '(unknown scope)'}`);
  process.stdout.write(`\nOS trust boundary: ${OS_TRUST_BOUNDARY_STATEMENT}\n`);
}

/** Every file of the package: what a trust approves (PROTOCOL §4), with its bounds. */
function printPackageFiles(detail: PluginDetail): void {
  const { entries, bytes } = detail.packageLimits;
  process.stdout.write(
    `\npackage files (${detail.files.length}; at most ${entries} entries and ${bytes / 1024 / 1024} MiB), all reviewed:\n`,
  );
  for (const file of detail.files)
    say(
      `  ${file.mode}  ${String(file.size).padStart(10)}  ${file.path}${file.type === 'directory' ? '/' : ''}${file.target !== undefined ? ` -> ${file.target}` : ''}`,
    );
}
