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
import { REF_HELP, operationIdOf, withRefScope, type RefScope } from '../work-refs.js';
import { ago, emit, errorText, printJson, printTable, say } from '../output.js';
import { milliseconds, oneOf, parseJsonInput, positiveInt, requireYes } from '../parse.js';
import { printLogEntries } from './long-ops.js';
import { cancelOperation, finishOperation, printOperation, runAgainCommand } from './work-output.js';

export function registerOperationCommands(program: Command): void {
  program
    .command('run <plugin> <project> <action>')
    .description('queue one durable operation (a plugin action on a project)')
    .option('--input <json>', 'the action input, as JSON')
    .option('--yes', 'confirm: this lets the plugin change the project')
    .option('--idempotency-key <key>', 'the same key returns the same operation')
    .option('--wait', 'follow it to a terminal state (exit 1 unless it succeeded); prints its id at once')
    .option('--follow', "with --wait: print the plugin's stderr live (the default on a terminal)")
    .option('--no-follow', 'with --wait: only the outcome')
    .option(
      '--timeout <duration>',
      "a shorter time limit than the plugin's operate limit (`plugin show` prints it): 30s, 15m",
      milliseconds('--timeout'),
    )
    .addHelpText(
      'after',
      '\nExample:\n  switchyard run fixture-inspector shop fixture.echo --input \'{"hello":"world"}\' --yes --wait\n\nWith --wait the id is printed first (on stderr with --json), so another terminal can follow it.',
    )
    .action(
      async (
        pluginId: string,
        projectId: string,
        action: string,
        options: {
          input?: string;
          yes?: boolean;
          idempotencyKey?: string;
          wait?: boolean;
          follow?: boolean;
          timeout?: number;
        },
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
          const existing = created ? '' : ' (existing operation for this idempotency key)';
          if (!options.wait) {
            if (config.json) return printJson(operation);
            return say(`${operation.id}${existing}`);
          }
          // The id first: another terminal can follow, show or cancel it while this one waits.
          const started = `operation ${operation.id} ${operation.state}${existing}`;
          if (config.json) process.stderr.write(`${started}\n`);
          else say(started);
          // With --json stdout holds one document: no log lines in it.
          const follow = !config.json && (options.follow ?? process.stdout.isTTY === true);
          await finishOperation(
            backend.work,
            operation,
            config.json,
            follow
              ? (signal) =>
                  backend.work.followOperationLogs(
                    operation.id,
                    (entries) => printLogEntries(entries, false),
                    { signal },
                  )
              : undefined,
          );
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
              // The plugin's message leads; the code is the detail (JSON keeps both apart).
              item.errorCode ? errorText(item.errorCode, item.errorMessage) : undefined,
              ago(item.requestedAt),
            ]),
          );
        }),
    );
  withRefScope(op.command('show <operation>'), 'operation')
    .description(
      'one operation: its input and result or error, who requested and cancelled it, the worker, the duration, and the command that runs it again',
    )
    .addHelpText(
      'after',
      `\n${REF_HELP}\n\nExamples:\n  switchyard op show 5c1d20aa\n  switchyard op show latest --project shop`,
    )
    .action(async (ref: string, options: RefScope, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const operation = await backend.work.getOperation(await operationIdOf(backend, ref, options));
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
  withRefScope(op.command('cancel <operation>'), 'operation')
    .description(
      'cancel: a queued operation never starts; a running one is killed (prints how it ended; waits up to 10s)',
    )
    .addHelpText('after', `\n${REF_HELP}\n\nExample:\n  switchyard op cancel 5c1d20aa`)
    .action(async (ref: string, options: RefScope, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        await cancelOperation(backend.work, await operationIdOf(backend, ref, options), config.json);
      }),
    );
  withRefScope(op.command('wait <operation>'), 'operation')
    .description('follow an operation to a terminal state (exit 1 unless it succeeded)')
    .addHelpText('after', `\n${REF_HELP}\n\nExample:\n  switchyard op wait latest --plugin fixture-inspector`)
    .action(async (ref: string, options: RefScope, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const id = await operationIdOf(backend, ref, options);
        await finishOperation(backend.work, await backend.work.getOperation(id), config.json);
      }),
    );
}
