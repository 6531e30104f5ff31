// switchyard up / api: the embedded default and the front process.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { runApiProcess } from '../../api/api-process.js';
import { createLogger } from '../../core/platform/index.js';
import { redact } from '../../core/safety/index.js';
import { globalsOf } from '../command-context.js';
import { collect, positiveInt } from '../parse.js';
import { StartAborted, startUp, type AppendFsync, type RunningUp } from '../embedded-up.js';
import { InvalidArgumentError } from 'commander';
import { runDemo } from '../demo.js';

export const DEFAULT_PORT = 7317;

function port(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65_535)
    throw new InvalidArgumentError('--port must be 0–65535');
  return parsed;
}

function appendfsync(value: string): AppendFsync {
  if (value !== 'always' && value !== 'everysec')
    throw new InvalidArgumentError('--appendfsync must be always or everysec');
  return value;
}

export function registerUpCommand(program: Command): void {
  program
    .command('up')
    .description(
      'run everything on this machine: embedded Redis (unless --redis-url), the api with the UI, workers, the scheduler',
    )
    .option('--workers <n>', 'worker processes', positiveInt('--workers'), 2)
    .option('--concurrency <n>', 'plugin calls at once per worker', positiveInt('--concurrency'), 2)
    .option('--host <host>', 'address the api binds', '127.0.0.1')
    .option('--port <port>', 'api port', port, DEFAULT_PORT)
    .option(
      '--insecure-http',
      'let the api serve plain HTTP on a non-loopback --host (behind a TLS proxy only)',
    )
    .option(
      '--allowed-host <name>',
      'a host name /healthz and /metrics answer for (DNS rebinding: besides IP literals, localhost and --host; repeatable)',
      collect,
      [] as string[],
    )
    .option('--appendfsync <mode>', 'embedded Redis AOF fsync: everysec or always', appendfsync, 'everysec')
    .option(
      '--log-level <level>',
      'fatal, error, warn, info, debug (default: warn on a terminal, where maintenance lines would bury your prompt; info when logged to a file or a pipe)',
    )
    .addHelpText('after', '\nExample:\n  switchyard up --workers 4 --port 8080')
    .action(
      async (
        options: {
          workers: number;
          concurrency: number;
          host: string;
          port: number;
          appendfsync: AppendFsync;
          logLevel?: string;
          insecureHttp?: boolean;
          allowedHost: string[];
        },
        command: Command,
      ) => {
        const config = globalsOf(command);
        const logLevel = options.logLevel ?? (process.stderr.isTTY ? 'warn' : 'info');
        const logger = createLogger('up', logLevel);
        // Signals are handled from the first moment: during start-up they abort it cleanly.
        const aborter = new AbortController();
        let up: RunningUp | undefined;
        const onSignal = () => (up ? void up.stop() : aborter.abort());
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        try {
          up = await startUp(
            config,
            {
              workers: options.workers,
              workerConcurrency: options.concurrency,
              host: options.host,
              port: options.port,
              logLevel,
              appendfsync: options.appendfsync,
              ...(options.insecureHttp ? { insecureHttp: true } : {}),
              allowedHosts: options.allowedHost,
            },
            logger,
            aborter.signal,
          );
        } catch (error) {
          if (error instanceof StartAborted)
            return void process.stdout.write('Switchyard stopped during start-up\n');
          throw error;
        }
        // The api logs where it wrote the first admin token at info, below a terminal's level: say it here.
        const tokenFile = join(config.dataDir, 'api-token');
        process.stdout.write(
          `Switchyard is up: ${up.url}/ (Redis ${redact(up.redisUrl)}); Ctrl-C stops everything\n` +
            (existsSync(tokenFile) ? `The web UI signs in with the admin token in ${tokenFile}\n` : ''),
        );
        await up.stopped;
        process.stdout.write('Switchyard stopped\n');
      },
    );

  program
    .command('api')
    .description('run the api process (HTTP API and web UI)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port', port, DEFAULT_PORT)
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM)')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option('--insecure-http', 'allow plain HTTP on a non-loopback address (behind a TLS proxy only)')
    .option(
      '--allowed-host <name>',
      'a host name /healthz and /metrics answer for (DNS rebinding: besides IP literals, localhost and --host; repeatable)',
      collect,
      [] as string[],
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug', 'info')
    .addHelpText('after', '\nExample:\n  switchyard api --port 8080 --redis-url redis://127.0.0.1:6379')
    .action(
      async (
        options: {
          host: string;
          port: number;
          logLevel: string;
          tlsCert?: string;
          tlsKey?: string;
          insecureHttp?: boolean;
          allowedHost: string[];
        },
        command: Command,
      ) => {
        const config = globalsOf(command);
        await runApiProcess({
          dataDir: config.dataDir,
          redisUrl: config.redisUrl,
          prefix: config.prefix,
          logLevel: options.logLevel,
          api: {
            host: options.host,
            port: options.port,
            ...(options.tlsCert ? { tlsCert: options.tlsCert } : {}),
            ...(options.tlsKey ? { tlsKey: options.tlsKey } : {}),
            ...(options.insecureHttp ? { insecureHttp: true } : {}),
            allowedHosts: options.allowedHost,
          },
        });
      },
    );
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'the guided main job (npm start): a fresh demo data dir, the example plugin, a batch inspection, then serve',
    )
    .option('--port <port>', 'api port', port, DEFAULT_PORT)
    .option('--workers <n>', 'worker processes', positiveInt('--workers'), 2)
    .addHelpText('after', '\nExample:\n  npm start            (same as: switchyard demo)')
    .action(async (options: { port: number; workers: number }, command: Command) => {
      const given = command.optsWithGlobals() as { dataDir?: string };
      await runDemo({
        ...(given.dataDir ? { dataDir: given.dataDir } : {}),
        port: options.port,
        workers: options.workers,
      });
    });
}
