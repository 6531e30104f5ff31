// How a command gets what it works with: global options resolved, then the
// one Backend over either the api's routes in this process around the core
// over Redis (local mode: Redis reached fail-fast with a message naming the
// URL, closed afterwards) or the HTTP API (remote mode).
import type { Command } from 'commander';
import { routes } from '../core/contract/index.js';
import { ERROR_CODES } from '../core/platform/index.js';
import { callRoute } from './api-calls.js';
import { NotAllowedError } from './cli-errors.js';
import { localUser, runtimeFor } from '../core/runtime/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { apiBackend } from './api-backend.js';
import type { Backend } from './backend.js';
import { resolveConfig, type GlobalOptions, type ResolvedConfig } from './config.js';
import { ApiClient } from './http.js';
import { InProcessTransport } from './in-process-transport.js';
import { resolveTarget, type RemoteOptions, type Target } from './target.js';

export interface CommandContext {
  config: ResolvedConfig;
  runtime: Runtime;
  actor: string;
}

export interface BackendContext {
  config: ResolvedConfig;
  backend: Backend;
  target: Target;
}

export function globalsOf(command: Command): ResolvedConfig {
  return resolveConfig(command.optsWithGlobals() as GlobalOptions);
}

export function targetOf(command: Command): Promise<Target> {
  return resolveTarget(command.optsWithGlobals() as RemoteOptions);
}

/** Local only: commands that need the core itself (processes, the demo). */
export async function withRuntime<T>(
  command: Command,
  body: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const config = globalsOf(command);
  const runtime = await runtimeFor(config, 'cli', { failFast: true });
  try {
    return await body({ config, runtime, actor: localUser() });
  } finally {
    await runtime.close();
  }
}

/** Every command that starts no process: the same code over either transport. */
export async function withBackend<T>(
  command: Command,
  body: (context: BackendContext) => Promise<T>,
): Promise<T> {
  const config = globalsOf(command);
  const target = await targetOf(command);
  if (target.mode === 'remote')
    return body({ config, target, backend: apiBackend(new ApiClient(target.url, target.token)) });
  return withRuntime(command, async ({ runtime, actor }) => {
    const transport = new InProcessTransport(runtime, actor);
    try {
      return await body({ config, target, backend: apiBackend(transport) });
    } finally {
      await transport.close();
    }
  });
}

/**
 * Remote mode: refuse a command whose route needs `needed` before any prompt
 * or confirmation, when the token's role (GET /me) lacks it (exit 4). Local
 * mode is admin, and the API still decides every request.
 */
export async function refuseUnlessRole(
  target: Target,
  route: { role: 'viewer' | 'operator' | 'admin' },
  command: string,
): Promise<void> {
  if (target.mode !== 'remote') return;
  const me = (await callRoute(new ApiClient(target.url, target.token), routes.me)).body;
  const order = ['viewer', 'operator', 'admin'];
  if (order.indexOf(me.role) < order.indexOf(route.role))
    throw new NotAllowedError(
      ERROR_CODES.FORBIDDEN,
      `${command} needs the ${route.role} role; token ${me.name} has ${me.role}`,
      route.role,
    );
}
