// switchyard run / op list / show / cancel / wait: durable operations
// (docs/CLI.md "Work"); op logs is in long-ops.ts.
import type { Command } from 'commander';
import { MAX_PAGE_LIMIT } from '../../core/redis/index.js';
import {
  OPERATION_FILTERS,
  operationOutcome,
  type OperationFilter,
} from '../../core/work/operations/index.js';
import { routes } from '../../core/contract/index.js';
import { refuseUnlessRole, withBackend } from '../command-context.js';
import { ago, emit, printJson, printTable, say } from '../output.js';
import { milliseconds, oneOf, parseJsonInput, positiveInt, requireYes } from '../parse.js';
import { cancelOperation, finishOperation, printOperation, runAgainCommand } from './work-output.js';

export function registerOperationCommands(program: Command): void {
  program
    .command('run <plugin> <project> <action>')
    .description('queue one durable operation (a plugin action on a project)')
    .option('--input <json>', 'the action input, as JSON')
    .option('--yes', 'confirm: this lets the plugin change the project')
    .option('--idempotency-key <key>', 'the same key returns the same operation')
    .option('--wait', 'follow it to a terminal state (exit 1 unless it succeeded)')
    .option(
      '--timeout <duration>',
      "a shorter time limit than the plugin's operate limit (`plugin show` prints it): 30s, 15m",
      milliseconds('--timeout'),
    )
    .addHelpText(
      'after',
      '\nExample:\n  switchyard run fixture-inspector shop fixture.echo --input \'{"hello":"world"}\' --yes --wait',
    )
    .action(
      async (
        pluginId: string,
        projectId: string,
        action: string,
        options: { input?: string; yes?: boolean; idempotencyKey?: string; wait?: boolean; timeout?: number },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend, target }) => {
          const input = parseJsonInput(options.input);
          await refuseUnlessRole(target, routes.createOperation, 'run');
          requireYes(
            options.yes,
            `run ${pluginId} ${projectId} ${action}`,
            `this runs the action ${action} of ${pluginId} on project ${projectId}, which may change it`,
          );
          const { operation, created } = await backend.work.createOperation({
            pluginId,
            projectId,
            action,
            input,
            ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
            ...(options.timeout !== undefined ? { timeoutMs: options.timeout } : {}),
          });
          if (!options.wait) {
            if (config.json) return printJson(operation);
            return say(`${operation.id}${created ? '' : ' (existing operation for this idempotency key)'}`);
          }
          await finishOperation(backend.work, operation, config.json);
        }),
    );

  const op = program
    .command('op')
    .description('durable operations')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard op list --project shop\n  switchyard op cancel <operationId>',
    );
  op.command('list')
    .description('the newest operations')
    .option('--project <id>', 'only this project')
    .option('--plugin <id>', 'only this plugin')
    .option('--requested-by <actor>', 'only those this actor requested (token:<name>, user:<name>@<host>)')
    .option(
      '--state <state>',
      `only this state: ${OPERATION_FILTERS.join(', ')} (outcome_unknown: failed, and the plugin may have acted)`,
      oneOf('--state', OPERATION_FILTERS),
    )
    .option('--limit <n>', 'how many', positiveInt('--limit'), 20)
    .addHelpText('after', '\nExample:\n  switchyard op list --project shop --state failed')
    .action(
      async (
        options: {
          project?: string;
          plugin?: string;
          requestedBy?: string;
          state?: OperationFilter;
          limit: number;
        },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          const { items: operations } = await backend.work.listOperations({
            limit: Math.min(options.limit, MAX_PAGE_LIMIT),
            ...(options.project ? { projectId: options.project } : {}),
            ...(options.plugin ? { pluginId: options.plugin } : {}),
            ...(options.state ? { state: options.state } : {}),
            ...(options.requestedBy ? { requestedBy: options.requestedBy } : {}),
          });
          if (config.json) return printJson(operations);
          printTable(
            ['OPERATION', 'PLUGIN', 'PROJECT', 'ACTION', 'STATE', 'ERROR', 'REQUESTED'],
            operations.map((item) => [
              item.id,
              item.pluginId,
              item.projectId,
              item.action,
              operationOutcome(item),
              item.errorCode,
              ago(item.requestedAt),
            ]),
          );
        }),
    );
  op.command('show <id>')
    .description(
      'one operation: its input and result or error, who requested and cancelled it, the worker, the duration, and the command that runs it again',
    )
    .addHelpText('after', '\nExample:\n  switchyard op show op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const operation = await backend.work.getOperation(id);
        emit(config.json, operation, () => {
          printOperation(operation);
          say('');
          say('Run it again:');
          say(`  ${runAgainCommand(operation)}`);
          if (JSON.stringify(operation.input ?? null).includes('[REDACTED]'))
            say('  (the input shows [REDACTED] where a secret was: put the real value back)');
        });
      }),
    );
  op.command('cancel <id>')
    .description(
      'cancel: a queued operation never starts; a running one is killed (prints how it ended; waits up to 10s)',
    )
    .addHelpText('after', '\nExample:\n  switchyard op cancel op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        await cancelOperation(backend.work, id, config.json);
      }),
    );
  op.command('wait <id>')
    .description('follow an operation to a terminal state (exit 1 unless it succeeded)')
    .addHelpText('after', '\nExample:\n  switchyard op wait op_5c1d…')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        await finishOperation(backend.work, await backend.work.getOperation(id), config.json);
      }),
    );
}
