#!/usr/bin/env node
// The `switchyard` command. Thin: every rule lives in the core services.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ERROR_CODES, EXIT, SwitchyardError, exitCodeOf } from '../core/platform/index.js';
import { registerLongOpCommands } from './commands/long-ops.js';
import { registerPluginCommands } from './commands/plugin-commands.js';
import { registerProcessCommands } from './commands/processes.js';
import { registerProjectCommands } from './commands/project-commands.js';
import { registerScheduleCommands } from './commands/schedule-commands.js';
import { registerWebhookCommands } from './commands/webhook-commands.js';
import { registerSessionCommands } from './commands/session.js';
import { registerCompletionCommand } from './commands/completion.js';
import { registerTokenCommands } from './commands/token-commands.js';
import { registerWorkCommands } from './commands/work-commands.js';
import { Interrupted, WorkFailed } from './commands/work-output.js';
import { registerDemoCommand, registerUpCommand } from './commands/up-command.js';
import {
  escapeControlKeepingLines,
  helpConfiguration,
  helpWidth,
  printJson,
  setWideTables,
} from './output.js';

/** The package's version (package.json sits two levels above src/cli and dist/cli). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function outputFormatOption(value: string): string {
  if (value !== 'wide') throw new InvalidArgumentError('--output must be wide (for JSON use --json)');
  return value;
}

function logFormatOption(value: string): string {
  if (value !== 'json' && value !== 'pretty')
    throw new InvalidArgumentError('--log-format must be json or pretty');
  return value;
}

export function buildProgram(): Command {
  const program = new Command('switchyard')
    .description(
      'Run third-party plugins as supervised, per-call processes on a pool of workers fed by Redis.',
    )
    .option(
      '--data-dir <dir>',
      'data directory (env SWITCHYARD_DATA_DIR; default $XDG_DATA_HOME/switchyard or ~/.local/share/switchyard)',
    )
    .option(
      '--redis-url <url>',
      'Redis URL (env SWITCHYARD_REDIS_URL; default: the embedded Redis of `switchyard up` for this data dir)',
    )
    .option(
      '--prefix <prefix>',
      'Redis key prefix, so installations can share a Redis (env SWITCHYARD_PREFIX; default: switchyard)',
    )
    .option('--json', 'print exactly one JSON document on stdout')
    .addOption(
      new Option(
        '-o, --output <format>',
        'wide: tables show every column and value whole, whatever the width (else they fit the terminal)',
      ).argParser(outputFormatOption),
    )
    .option(
      '--url <url>',
      "remote mode: the HTTP API to talk to (env SWITCHYARD_URL; default: the profile's)",
    )
    .option(
      '--token <token>',
      'remote mode: a token (env SWITCHYARD_TOKEN; prefer `login --token-stdin`: this lands in shell history)',
    )
    .option('--profile <name>', 'remote mode: a profile `switchyard login` saved (env SWITCHYARD_PROFILE)')
    .option('--remote', 'remote mode only: never fall back to local mode (Redis directly)')
    .addOption(
      new Option(
        '--log-format <format>',
        'process logs: pretty (default on a terminal) or json (default otherwise; env SWITCHYARD_LOG_FORMAT)',
      ).argParser(logFormatOption),
    )
    .version(version(), '--version', 'print the version')
    // Commander quotes what the user typed: terminal-safe, like all our output.
    .configureHelp(helpConfiguration)
    .configureOutput({
      getOutHelpWidth: helpWidth,
      getErrHelpWidth: helpWidth,
      writeErr: (text) => process.stderr.write(escapeControlKeepingLines(text)),
      outputError: (text, write) => write(escapeControlKeepingLines(text)),
    })
    // Children (workers, api, scheduler started by `up`) inherit the choice.
    .hook('preAction', (command) => {
      const { logFormat, output } = command.optsWithGlobals() as { logFormat?: string; output?: string };
      if (logFormat) process.env.SWITCHYARD_LOG_FORMAT = logFormat;
      setWideTables(output === 'wide');
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerProcessCommands(program);
  registerUpCommand(program);
  registerDemoCommand(program);
  registerPluginCommands(program);
  registerProjectCommands(program);
  registerWorkCommands(program);
  registerTokenCommands(program);
  registerScheduleCommands(program);
  registerWebhookCommands(program);
  registerLongOpCommands(program);
  registerSessionCommands(program);
  registerCompletionCommand(program);
  for (const command of allCommands(program)) command.exitOverride();
  return program;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}

/** Exit status per docs/CLI.md: 0 success, 1 the work failed, 2 bad usage or input, 4 not allowed. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    const status = report(error);
    // --json: errors are one JSON document on stdout too (a failed batch already printed its own;
    // an interrupted wait printed nothing, and names the work that goes on).
    if (status !== 0 && argv.includes('--json') && !(error instanceof WorkFailed))
      printJson({ error: { code: errorCodeOf(error), message: messageOf(error) } });
    if (argv.includes('--json') && error instanceof Interrupted)
      printJson({ error: { code: error.code, message: messageOf(error), ...error.work } });
    return status;
  }
}

function errorCodeOf(error: unknown): string {
  if (error instanceof CommanderError) return ERROR_CODES.USAGE;
  if (error instanceof SwitchyardError) return error.code;
  return ERROR_CODES.INTERNAL;
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^error: /, '').trim();
}

/** The exit status, error-catalogue.ts's for the error's code; prints the error. */
function report(error: unknown): number {
  if (isClosedStdout(error)) return EXIT.ok;
  if (error instanceof CommanderError) {
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.code === 'commander.help'
    )
      return EXIT.ok;
    return exitCodeOf(ERROR_CODES.USAGE); // commander already printed the message
  }
  if (error instanceof WorkFailed) {
    if (error.message) writeError(error.message, '');
    return error.exitCode;
  }
  writeError(error instanceof Error ? error.message : String(error));
  if (error instanceof SwitchyardError) return exitCodeOf(error.code, error.httpStatus);
  return exitCodeOf(ERROR_CODES.INTERNAL);
}

/** Error messages quote plugins, packages and users: terminal-safe. */
function writeError(message: string, label = 'error: '): void {
  process.stderr.write(`${label}${escapeControlKeepingLines(message)}\n`);
}

function isClosedStdout(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}

// `switchyard plugin list | head -1`: once the reader has gone, stop quietly
// (as a filter does), without a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const exitCode = await main(process.argv);
// A failed command ends now, even if a connection it opened is still closing.
if (exitCode !== 0) process.exit(exitCode);
process.exitCode = exitCode;
