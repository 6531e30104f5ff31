// One line per event, readable, with a level (pino).
import { pino, type Logger } from 'pino';

export type LogFn = (event: string, fields?: Record<string, unknown>) => void;

export function createLogger(name: string, level = process.env.SWITCHYARD_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

export function eventLogger(logger: Logger): LogFn {
  return (event, fields = {}) => logger.info({ event, ...fields }, event);
}
