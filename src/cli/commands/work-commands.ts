// The queued-work commands (docs/CLI.md "Work"), in the order help lists them:
// inspect and batch, run and op, audit.
import { registerRolloutCommands } from './rollout-commands.js';
import { registerFactsCommand } from './facts-command.js';
import type { Command } from 'commander';
import { registerAuditCommand } from './audit-commands.js';
import { registerQueueCommand } from './queue-command.js';
import { registerInspectCommands } from './inspect-batches.js';
import { registerOperationCommands } from './operation-commands.js';

export function registerWorkCommands(program: Command): void {
  registerInspectCommands(program);
  registerOperationCommands(program);
  registerRolloutCommands(program);
  registerAuditCommand(program);
  registerQueueCommand(program);
  registerFactsCommand(program);
}
