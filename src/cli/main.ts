#!/usr/bin/env node
// The `switchyard` command. Thin: every rule lives in the core services.
import { Command, CommanderError } from 'commander';
import { SwitchyardError } from '../core/errors.js';
import { RedisUnreachableError } from '../core/redis.js';
import { registerPluginCommands } from './commands/plugins.js';
import { registerProcessCommands } from './commands/processes.js';
import { registerProjectCommands } from './commands/projects.js';
import { registerScheduleCommands } from './commands/schedules.js';
import { registerTokenCommands } from './commands/tokens.js';
import { WorkFailed, registerWorkCommands } from './commands/work.js';
import { registerDemoCommand, registerUpCommand } from './commands/up.js';

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
      'Redis key prefix, so installations can share a Redis (env SWITCHYARD_PREFIX)',
    )
    .option('--json', 'print exactly one JSON document on stdout')
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
  for (const command of allCommands(program)) command.exitOverride();
  return program;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}

/** Exit status per CLI.md: 0 success, 1 the work failed, 2 bad usage or input. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return report(error);
  }
}

function report(error: unknown): number {
  if (error instanceof CommanderError) {
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.code === 'commander.help'
    )
      return 0;
    return 2; // commander already printed the message
  }
  if (error instanceof WorkFailed) {
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  if (error instanceof RedisUnreachableError) {
    process.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof SwitchyardError) {
    process.stderr.write(`error: ${error.message}\n`);
    return error.callFailure ? 1 : 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: ${message}\n`);
  return 1;
}

const exitCode = await main(process.argv);
// A failed command ends now, even if a connection it opened is still closing.
if (exitCode !== 0) process.exit(exitCode);
process.exitCode = exitCode;
