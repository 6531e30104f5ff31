// Long operations and live logs (CLI.md): `plugin set` (the host's time limits
// for a plugin's calls), `op logs [--follow]`, and the log printing that
// `plugin logs [--follow]` shares. Registered onto the `plugin` and `op`
// commands that plugins.ts and operations.ts create.
import type { Command } from 'commander';
import type { LogEntry, PluginDetail } from '../../core/plugins/index.js';
import { formatLimit, MAX_LIMIT_MS } from '../../core/plugins/index.js';
import { InvalidInputError } from '../../core/platform/index.js';
import { withBackend } from '../command-context.js';
import { ago, emit, printJson, say } from '../output.js';
import { durationFrom } from '../parse.js';
import { untilInterrupted } from './work-output.js';

export function registerLongOpCommands(program: Command): void {
  const plugin = subcommand(program, 'plugin');
  const op = subcommand(program, 'op');

  plugin
    .command('set <id>')
    .description("admin: the host's time limits for this plugin's calls (defaults: inspect 15s, operate 15m)")
    .option(
      '--inspect-timeout <duration>',
      'limit of one project.inspect call',
      durationFrom('--inspect-timeout', 1_000),
    )
    .option(
      '--operate-timeout <duration>',
      'limit of one project.operate call',
      durationFrom('--operate-timeout', 1_000),
    )
    .addHelpText(
      'after',
      `\nDurations: 500ms, 30s, 15m, 2h (a bare number is milliseconds), at most ${MAX_LIMIT_MS} ms. ` +
        'Health checks keep 10s. `run --timeout` may only shorten the operate limit; ' +
        "a worker's --call-timeout caps every call it runs.\n\nExample:\n  switchyard plugin set deployer --operate-timeout 2h",
    )
    .action(
      async (id: string, options: { inspectTimeout?: number; operateTimeout?: number }, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          if (options.inspectTimeout === undefined && options.operateTimeout === undefined) {
            throw new InvalidInputError(
              `nothing to set; example: switchyard plugin set ${id} --operate-timeout 30m`,
            );
          }
          const detail = await backend.plugins.setTimeLimits(id, {
            ...(options.inspectTimeout !== undefined ? { inspectMs: options.inspectTimeout } : {}),
            ...(options.operateTimeout !== undefined ? { operateMs: options.operateTimeout } : {}),
          });
          emit(config.json, detail, () => say(`${id}: ${limitsText(detail)}`));
        }),
    );

  op.command('logs <id>')
    .description("that operation's redacted stderr (and how its call ended); live while it runs")
    .option('--follow', 'keep printing lines as the call writes them; ends when the operation ends')
    .addHelpText(
      'after',
      '\nWith --json: the entries as one array, or with --follow one JSON entry per line.\n\nExample:\n  switchyard op logs op_5c1d… --follow',
    )
    .action(async (id: string, options: { follow?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        if (options.follow)
          return untilFollowEnds((signal) =>
            backend.work.followOperationLogs(id, (entries) => printLogEntries(entries, config.json), {
              signal,
            }),
          );
        const entries = await backend.work.operationLogs(id);
        if (config.json) return printJson(entries);
        if (entries.length === 0) return say(`no stderr from ${id} yet`);
        return printLogEntries(entries, false);
      }),
    );
}

/** Runs a log follow with a signal that Ctrl-C or SIGTERM aborts: the follow ends quietly instead of dying. */
export function untilFollowEnds(body: (signal: AbortSignal) => Promise<void>): Promise<void> {
  return untilInterrupted(body, ['SIGINT', 'SIGTERM']);
}

/** Oldest first; with `jsonLines` one JSON document per entry (a follow's output). */
export function printLogEntries(entries: LogEntry[], jsonLines: boolean): void {
  for (const entry of entries) {
    if (jsonLines) process.stdout.write(`${JSON.stringify(entry)}\n`);
    // Each stderr line as the plugin wrote it, with its control characters made visible.
    else say(`${entry.at} (${ago(entry.at)})  ${entry.source.padEnd(6)}  ${entry.line}`);
  }
}

export function limitsText(detail: PluginDetail): string {
  const { inspectMs, operateMs, healthMs } = detail.timeLimits;
  return `inspect ${formatLimit(inspectMs)}, operate ${formatLimit(operateMs)}, health ${formatLimit(healthMs)}`;
}

export function containmentText(detail: PluginDetail): string {
  const { mechanism, detail: text, enforced, missing, workers } = detail.containment;
  const lines = [`${mechanism}: ${text}`, ...mechanismLines(enforced, missing)];
  if (workers.length === 0) lines.push('running workers: none reported (start one: switchyard worker)');
  for (const worker of workers) {
    lines.push(
      `worker ${worker.worker}${worker.required ? ' (--require-confinement)' : ''}:`,
      ...mechanismLines(worker.enforced, worker.missing).map((line) => `  ${line}`),
    );
  }
  return lines.join('\n');
}

function mechanismLines(enforced: readonly string[], missing: readonly string[]): string[] {
  return [
    ...enforced.map((item) => `  enforced: ${item}`),
    ...(missing.length === 0
      ? ['  not enforced: nothing']
      : missing.map((item) => `  NOT enforced: ${item}`)),
  ];
}

function subcommand(program: Command, name: string): Command {
  const found = program.commands.find((command) => command.name() === name);
  if (!found) throw new Error(`the ${name} command must be registered before the long-operation commands`);
  return found;
}
