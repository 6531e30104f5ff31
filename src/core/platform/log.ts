// One line per event, with a level (pino): failures at warn/error so that
// `--log-level warn` still shows them. Human-readable on a terminal, JSON
// lines when stdout is not a TTY or SWITCHYARD_LOG_FORMAT=json (the CLI's
// `--log-format`).
import { pino, type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { escapeControlDeep } from '../safety/index.js';
import { readEnv } from './environment.js';

export type LogFn = (event: string, fields?: Record<string, unknown>, level?: Level) => void;

export type LogFormat = 'json' | 'pretty';

export function logFormat(
  env: NodeJS.ProcessEnv = process.env,
  tty = process.stdout.isTTY === true,
): LogFormat {
  const chosen = readEnv('SWITCHYARD_LOG_FORMAT', env);
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return tty ? 'pretty' : 'json';
}

export function createLogger(name: string, level = readEnv('SWITCHYARD_LOG_LEVEL') ?? 'info'): Logger {
  const options = { name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (logFormat() === 'json') return pino(options);
  // Synchronous, in this thread: no transport worker per process.
  // JSON escapes control characters itself; the human form must do it here.
  return pino(
    { ...options, formatters: { log: (object) => escapeControlDeep(object) as Record<string, unknown> } },
    pretty({
      sync: true,
      colorize: process.stdout.isTTY === true,
      ignore: 'pid,hostname',
      translateTime: 'SYS:HH:MM:ss',
    }),
  );
}

// Events that report something going wrong, by name: the callers say what
// happened, this decides how loud it is.
const ERROR_EVENTS = /(^|-)(error|crash(ed)?)$/;
const WARN_EVENTS = /(^|-)(failed|failure|lost|unhealthy|refused|timeout|deadline|stalled|exited)$/;

/** The level of an event: error/warn for failures (or any event that carries an error), else info. */
export function levelOf(event: string, fields: Record<string, unknown> = {}): Level {
  if (ERROR_EVENTS.test(event)) return 'error';
  if (WARN_EVENTS.test(event) || fields.error !== undefined || fields.err !== undefined) return 'warn';
  return 'info';
}

export function eventLogger(logger: Logger): LogFn {
  return (event, fields = {}, level = levelOf(event, fields)) => logger[level]({ event, ...fields }, event);
}
