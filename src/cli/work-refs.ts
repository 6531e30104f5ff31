// Batch and operation ids as commands take them (docs/CLI.md "Ids"): the
// whole id, a unique prefix of its hex, or latest / latest~N, scoped by
// --plugin (and --project for operations). Resolved by the backend: locally
// from Redis, remotely by the api.
import type { Command } from 'commander';
import type { Backend } from './backend.js';

export interface RefScope {
  plugin?: string;
  project?: string;
}

export const REF_HELP =
  'An id may be the whole id, a unique prefix of its hex digits (8ae52e57), latest or latest~N (the N-th before the newest).';

/** `--plugin` (and for operations `--project`) to scope latest / latest~N. */
export function withRefScope(command: Command, kind: 'batch' | 'operation'): Command {
  command.option('--plugin <id>', `with latest or latest~N: the newest ${kind} of this plugin`);
  if (kind === 'operation')
    command.option('--project <id>', 'with latest or latest~N: the newest operation on this project');
  return command;
}

export function batchIdOf(backend: Backend, ref: string, scope: RefScope = {}): Promise<string> {
  return backend.work.resolveBatch(ref, scope.plugin ? { pluginId: scope.plugin } : {});
}

export function operationIdOf(backend: Backend, ref: string, scope: RefScope = {}): Promise<string> {
  return backend.work.resolveOperation(ref, {
    ...(scope.plugin ? { pluginId: scope.plugin } : {}),
    ...(scope.project ? { projectId: scope.project } : {}),
  });
}
