// How a command gets its runtime: global options resolved, Redis reached (fail
// fast, with a message naming the URL), closed afterwards.
import type { Command } from 'commander';
import { localUser } from '../core/context.js';
import { createRuntime, type Runtime } from '../core/runtime.js';
import { resolveConfig, type GlobalOptions, type ResolvedConfig } from './config.js';

export interface CommandContext {
  config: ResolvedConfig;
  runtime: Runtime;
  actor: string;
}

export function globalsOf(command: Command): ResolvedConfig {
  return resolveConfig(command.optsWithGlobals() as GlobalOptions);
}

export async function withRuntime<T>(
  command: Command,
  body: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const config = globalsOf(command);
  const runtime = await createRuntime({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    failFast: true,
  });
  try {
    return await body({ config, runtime, actor: localUser() });
  } finally {
    await runtime.close();
  }
}
