// switchyard worker / scheduler: one process each, for running them apart or
// on other machines.
import { Option, type Command } from 'commander';
import { DEFAULT_CALL_CAP_MS, formatLimit } from '../../core/plugins/index.js';
import { runSchedulerProcess } from '../../scheduler/scheduler-process.js';
import { DEFAULT_OPERATION_PRIORITY_MS, runWorkerProcess } from '../../worker/worker-process.js';
import { globalsOf } from '../command-context.js';
import { milliseconds, nonNegativeInt, positiveInt } from '../parse.js';

export function registerProcessCommands(program: Command): void {
  program
    .command('worker')
    .description('run a worker process: takes inspect, operate, health and maintenance jobs')
    .option('--concurrency <n>', 'plugin calls at once in this process', positiveInt('--concurrency'), 2)
    .option(
      '--shutdown-deadline <ms>',
      'on SIGTERM, how long running calls may finish before they are cancelled',
      milliseconds('--shutdown-deadline'),
      10_000,
    )
    .addOption(
      new Option(
        '--call-timeout <duration>',
        "upper bound on any one plugin call in this worker; below it each plugin's own limits apply " +
          '(`plugin set`; defaults inspect 15s, operate 15m, health 10s)',
      )
        .argParser(milliseconds('--call-timeout'))
        .default(DEFAULT_CALL_CAP_MS, formatLimit(DEFAULT_CALL_CAP_MS)),
    )
    .option(
      '--require-confinement',
      'refuse to run plugins unless every mechanism of kernel confinement is in force on this host ' +
        '(Landlock files, network and signals, seccomp, resource limits); the error names what is missing',
    )
    .option(
      '--lock-duration <ms>',
      "after how long a dead worker's jobs are taken again (default 30s); renewed while a call runs, " +
        'and a worker that cannot renew it (Redis out of reach) kills the call before it could lapse',
      milliseconds('--lock-duration'),
    )
    .option(
      '--operation-priority <ms>',
      'while an operation runs on any worker, start no new inspection call for up to this long (0: off)',
      nonNegativeInt('--operation-priority', 600_000),
      DEFAULT_OPERATION_PRIORITY_MS,
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug', 'info')
    .addHelpText(
      'after',
      '\nExample (another machine joining; the Redis URL comes from a file only its user can read, never\n' +
        'the command line, where any local user reads it with `ps`):\n' +
        '  # /etc/switchyard/worker.env, mode 0600: SWITCHYARD_REDIS_URL=rediss://… (user, password, host)\n' +
        '  set -a; . /etc/switchyard/worker.env; set +a\n' +
        '  switchyard worker --concurrency 4 --data-dir /srv/switchyard',
    )
    .action(
      async (
        options: {
          concurrency: number;
          shutdownDeadline: number;
          callTimeout: number;
          lockDuration?: number;
          operationPriority: number;
          logLevel: string;
          requireConfinement?: boolean;
        },
        command: Command,
      ) => {
        const config = globalsOf(command);
        await runWorkerProcess({
          dataDir: config.dataDir,
          redisUrl: config.redisUrl,
          prefix: config.prefix,
          concurrency: options.concurrency,
          shutdownDeadlineMs: options.shutdownDeadline,
          logLevel: options.logLevel,
          callPolicy: {
            limits: options.callTimeout ? { callTimeoutMs: options.callTimeout } : {},
            requireConfinement: options.requireConfinement === true,
          },
          worker: {
            operationPriorityMs: options.operationPriority,
            ...(options.lockDuration
              ? {
                  lockDurationMs: options.lockDuration,
                  stalledIntervalMs: Math.max(500, Math.floor(options.lockDuration / 2)),
                }
              : {}),
          },
        });
      },
    );

  program
    .command('scheduler')
    .description('run the scheduler: health checks, rediscovery, retention, recurring inspections')
    .option('--health-every <ms>', 'health checks of enabled plugins', milliseconds('--health-every'), 30_000)
    .option(
      '--rediscover-every <ms>',
      'rediscovery of plugin packages',
      milliseconds('--rediscover-every'),
      60_000,
    )
    .option('--retention-every <ms>', 'retention clean-up', milliseconds('--retention-every'), 3_600_000)
    .option('--log-level <level>', 'fatal, error, warn, info, debug', 'info')
    .addHelpText('after', '\nExample:\n  switchyard scheduler --health-every 60000')
    .action(
      async (
        options: { healthEvery: number; rediscoverEvery: number; retentionEvery: number; logLevel: string },
        command: Command,
      ) => {
        const config = globalsOf(command);
        await runSchedulerProcess({
          dataDir: config.dataDir,
          redisUrl: config.redisUrl,
          prefix: config.prefix,
          logLevel: options.logLevel,
          scheduler: {
            healthEveryMs: options.healthEvery,
            rediscoverEveryMs: options.rediscoverEvery,
            retentionEveryMs: options.retentionEvery,
          },
        });
      },
    );
}
