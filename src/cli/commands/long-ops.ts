// Long operations and live logs (CLI.md): `plugin set` (the host's policy for
// a plugin's calls: time limits, network, extra paths, resource limits), `op logs [--follow]`, and the log printing that
// `plugin logs [--follow]` shares. Registered onto the `plugin` and `op`
// commands that plugin-commands.ts and operation-commands.ts create.
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { LogEntry, PluginDetail, PluginSettings } from '../../core/plugins/index.js';
import {
  DEFAULT_RETENTION_BATCHES,
  formatLimit,
  LIMIT_BOUNDS,
  MAX_LIMIT_MS,
  MAX_RETENTION_BATCHES,
  MAX_RETENTION_DAYS,
  MIN_RETENTION_BATCHES,
  MAX_CONCURRENCY_CAP,
  parseRate,
  rateText,
} from '../../core/plugins/index.js';
import { InvalidInputError, withoutUndefined } from '../../core/platform/index.js';
import { withBackend } from '../command-context.js';
import { REF_HELP, operationIdOf, withRefScope, type RefScope } from '../work-refs.js';
import { ago, emit, escapeControl, outputWidth, printJson, say, wrapKeepingFingerprints } from '../output.js';
import { collect, durationFrom, durationIn, integerFrom, sizeFrom } from '../parse.js';
import { untilInterrupted } from './work-output.js';

export function registerLongOpCommands(program: Command): void {
  const plugin = subcommand(program, 'plugin');
  const op = subcommand(program, 'op');

  const bounds = LIMIT_BOUNDS;
  plugin
    .command('set <id>')
    .description(
      "admin: the host's policy for this plugin's calls — time limits, network, extra paths, resource limits",
    )
    .option(
      '--inspect-timeout <duration>',
      'limit of one project.inspect call (default 15s)',
      durationFrom('--inspect-timeout', 1_000),
    )
    .option(
      '--operate-timeout <duration>',
      'limit of one project.operate call (default 15m)',
      durationFrom('--operate-timeout', 1_000),
    )
    .option(
      '--network <allow|none>',
      'whether calls may open network sockets (none for packages trusted now)',
      (value) => {
        if (value !== 'allow' && value !== 'none')
          throw new InvalidArgumentError('--network must be allow or none');
        return value;
      },
    )
    .option(
      '--allow-read <path>',
      'a path calls may read besides the defaults (repeat; `none` clears the list)',
      collect,
      [],
    )
    .option(
      '--allow-write <path>',
      'a directory calls may write besides their TMPDIR (repeat; `none` clears)',
      collect,
      [],
    )
    .option(
      '--memory <size>',
      'memory of one call (default 2GiB)',
      sizeFrom('--memory', bounds.memoryBytes.min, bounds.memoryBytes.max),
    )
    .option(
      '--cpu <duration>',
      'CPU time of one call (default 30m)',
      durationIn(bounds.cpuMs.min, bounds.cpuMs.max, `--cpu must be a duration from 1s to 7d (30s, 15m, 2h)`),
    )
    .option(
      '--file-size <size>',
      'largest file one call may write (default 1GiB)',
      sizeFrom('--file-size', bounds.fileSizeBytes.min, bounds.fileSizeBytes.max),
    )
    .option(
      '--open-files <n>',
      'open descriptors per process (default 1024)',
      integerFrom('--open-files', bounds.openFiles.min, bounds.openFiles.max),
    )
    .option(
      '--processes <n>',
      'processes and threads of one call (default 256)',
      integerFrom('--processes', bounds.processes.min, bounds.processes.max),
    )
    .option(
      '--disk <size>',
      'what one call may write in all to its TMPDIR, a tmpfs of this size (default 256MiB)',
      sizeFrom('--disk', bounds.diskBytes.min, bounds.diskBytes.max),
    )
    .option(
      '--retention-batches <n>',
      `keep at least the newest <n> finished batches however old (default ${DEFAULT_RETENTION_BATCHES}, at least ${MIN_RETENTION_BATCHES})`,
      integerFrom('--retention-batches', MIN_RETENTION_BATCHES, MAX_RETENTION_BATCHES),
    )
    .option(
      '--retention-days <d>',
      'and keep every finished batch younger than <d> days (default: SWITCHYARD_RETENTION_DAYS, 7)',
      integerFrom('--retention-days', 0, MAX_RETENTION_DAYS),
    )
    .option(
      '--max-concurrency <n>',
      `most calls of this plugin at once across the installation, every worker on every machine (1 to ${MAX_CONCURRENCY_CAP}; \`none\` clears)`,
      capFrom,
    )
    .option(
      '--rate <calls/unit>',
      'most calls started per second or minute across the installation: 20/s, 600/m (`none` clears)',
      rateFrom,
    )
    .addHelpText(
      'after',
      `\nDurations: 500ms, 30s, 15m, 2h (a bare number is milliseconds), at most ${MAX_LIMIT_MS} ms. ` +
        'Health checks keep 10s. `run --timeout` may only shorten the operate limit; ' +
        "a worker's --call-timeout caps every call it runs. Sizes: 512MiB, 2GiB (units of 1024). " +
        'A call over a resource limit fails RESOURCE_LIMIT naming it. `plugin show` lists the policy ' +
        'and what each worker host enforces.' +
        '\n\nExamples:\n  switchyard plugin set deployer --operate-timeout 2h\n' +
        '  switchyard plugin set fetcher --network allow --memory 512MiB --cpu 60s --processes 64\n' +
        '  switchyard plugin set py-lint --allow-read /opt/shared-rules\n' +
        '  switchyard plugin set go-inspector --retention-batches 12 --retention-days 90\n' +
        '  switchyard plugin set github-inspector --max-concurrency 4 --rate 10/s\n' +
        '  switchyard plugin set github-inspector --max-concurrency none --rate none',
    )
    .action(async (id: string, options: PolicyOptions, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const settings = policySettings(options);
        if (Object.keys(settings).length === 0) {
          throw new InvalidInputError(
            `nothing to set; example: switchyard plugin set ${id} --operate-timeout 30m (see plugin set --help)`,
          );
        }
        const detail = await backend.plugins.setPolicy(id, settings);
        emit(config.json, detail, () => {
          say(`${id}: ${limitsText(detail)}`);
          for (const line of policyText(detail)) say(line);
        });
      }),
    );

  withRefScope(
    op
      .command('logs <operation>')
      .description("that operation's redacted stderr (and how its call ended); live while it runs")
      .option('--follow', 'keep printing lines as the call writes them; ends when the operation ends'),
    'operation',
  )
    .addHelpText(
      'after',
      `\nWith --json: the entries as one array, or with --follow one JSON entry per line.\n${REF_HELP}\n\nExample:\n  switchyard op logs latest --follow`,
    )
    .action(async (ref: string, options: { follow?: boolean } & RefScope, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const id = await operationIdOf(backend, ref, options);
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
    else printLogLine(entry);
  }
}

/**
 * One log entry in aligned columns: time, relative time, source, then the
 * line, wrapped under itself to the terminal's width. A narrow terminal (under
 * 120 columns) gets the time of day (UTC) rather than the whole timestamp.
 */
function printLogLine(entry: LogEntry): void {
  const width = outputWidth();
  const time = width >= 120 ? entry.at : entry.at.slice(11);
  const prefix = `${time}  ${(ago(entry.at) ?? '').padStart(8)}  ${entry.source.padEnd(6)}  `;
  const room = width - prefix.length;
  const line = escapeControl(entry.line);
  if (!Number.isFinite(room) || room < 20 || line.length <= room) return say(`${prefix}${entry.line}`);
  const [first, ...rest] = wrapKeepingFingerprints(line, room).split('\n');
  process.stdout.write(`${prefix}${first}\n`);
  for (const more of rest) process.stdout.write(`${' '.repeat(prefix.length)}${more}\n`);
}

export function limitsText(detail: PluginDetail): string {
  const { inspectMs, operateMs, healthMs } = detail.timeLimits;
  return `inspect ${formatLimit(inspectMs)}, operate ${formatLimit(operateMs)}, health ${formatLimit(healthMs)}`;
}

interface PolicyOptions {
  inspectTimeout?: number;
  operateTimeout?: number;
  network?: 'allow' | 'none';
  allowRead: string[];
  allowWrite: string[];
  memory?: number;
  cpu?: number;
  fileSize?: number;
  openFiles?: number;
  processes?: number;
  disk?: number;
  retentionBatches?: number;
  retentionDays?: number;
  maxConcurrency?: number | 'none';
  rate?: string;
}

// `none` stays a string here: commander turns a parser's null into ''.
function capFrom(value: string): number | 'none' {
  if (value === 'none') return 'none';
  return integerFrom('--max-concurrency', 1, MAX_CONCURRENCY_CAP)(value);
}

function rateFrom(value: string): string {
  if (value === 'none') return 'none';
  try {
    return rateText(parseRate(value));
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** The options given, by the core's names; paths made absolute here (the api host resolves none). */
function policySettings(options: PolicyOptions): PluginSettings {
  const paths = (list: string[]) =>
    list.length === 0 ? undefined : list.includes('none') ? [] : list.map((path) => resolve(path));
  return withoutUndefined({
    inspectMs: options.inspectTimeout,
    operateMs: options.operateTimeout,
    network: options.network,
    allowRead: paths(options.allowRead),
    allowWrite: paths(options.allowWrite),
    memoryBytes: options.memory,
    cpuMs: options.cpu,
    fileSizeBytes: options.fileSize,
    openFiles: options.openFiles,
    processes: options.processes,
    diskBytes: options.disk,
    retentionBatches: options.retentionBatches,
    retentionDays: options.retentionDays,
    maxConcurrency: options.maxConcurrency === 'none' ? null : options.maxConcurrency,
    rate: options.rate === 'none' ? null : options.rate,
  });
}

/** The policy lines of `plugin show` and `plugin set`. */
export function policyText(detail: PluginDetail): string[] {
  const { network, networkReason, allowRead, allowWrite, limits } = detail.policy;
  return [
    `network: ${network} — ${networkReason}`,
    `extra read paths: ${allowRead.join(', ') || '(none)'}`,
    `extra write paths: ${allowWrite.join(', ') || '(none)'}`,
    `limits per call: memory ${formatSize(limits.memoryBytes)}, cpu ${formatLimit(limits.cpuMs)}, ` +
      `file size ${formatSize(limits.fileSizeBytes)}, open files ${limits.openFiles}, processes ${limits.processes}, ` +
      `disk ${formatSize(limits.diskBytes)}`,
    `caps across the installation: ${capsText(detail)}`,
    ...(detail.retention
      ? [
          `retention: the newest ${detail.retention.batches} finished batches, and those younger than ${
            detail.retention.days === undefined
              ? "the host's SWITCHYARD_RETENTION_DAYS"
              : `${detail.retention.days} days`
          }`,
        ]
      : []),
  ];
}

/** `plugin show`'s caps: at once and per second or minute, or none. */
export function capsText(detail: PluginDetail): string {
  const { maxConcurrency, rate } = detail.caps;
  if (maxConcurrency === null && rate === null) return 'none';
  return [
    maxConcurrency === null ? 'no cap at once' : `at most ${maxConcurrency} at once`,
    rate === null ? 'no rate cap' : `at most ${rate}`,
  ].join(', ');
}

function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes}B`;
}

export function containmentText(detail: PluginDetail): string[] {
  const { mechanism, detail: text, enforced, missing, workers } = detail.containment;
  const lines = [`${mechanism}: ${text}`, ...mechanismLines(enforced, missing)];
  if (workers.length === 0) lines.push('running workers: none reported (start one: switchyard worker)');
  // Workers that enforce the same are named together, and one like this host says so: the block is
  // a dozen lines, and a reviewer looks for the host that differs, not the same block again.
  const here = mechanismLines(enforced, missing).join('\n');
  const groups = new Map<string, string[]>();
  for (const worker of workers) {
    const block = mechanismLines(worker.enforced, worker.missing).join('\n');
    const name = `${worker.worker}${worker.required ? ' (--require-confinement)' : ''}`;
    groups.set(block, [...(groups.get(block) ?? []), name]);
  }
  for (const [block, names] of groups) {
    const who = `${names.length === 1 ? 'worker' : 'workers'} ${names.join(', ')}:`;
    if (block === here) lines.push(`${who} the same as above`);
    else lines.push(who, ...block.split('\n').map((line) => `  ${line}`));
  }
  return lines;
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
