// Redis connections. Every process gets its connections from here so errors
// name the URL and say how to get a Redis.
import { Redis, type RedisOptions } from 'ioredis';
import { ERROR_CODES, SwitchyardError } from '../platform/index.js';
import { registerSecret } from '../safety/index.js';

export interface ConnectOptions {
  /** Fail fast (CLI commands) instead of retrying forever (workers, api). */
  failFast?: boolean;
  /** BullMQ workers need maxRetriesPerRequest: null. */
  forBullmq?: boolean;
  /**
   * A process that answers requests (the api): while Redis cannot be reached a
   * command fails at once (no offline queue, a command timeout) so the caller
   * gets a 503 instead of a long wait; the connection still reconnects forever.
   */
  answersRequests?: boolean;
}

/** The longest a command of an answering process waits for Redis (a half-open connection). */
export const ANSWER_COMMAND_TIMEOUT_MS = 1_500;

/** Redis cannot be reached (the CLI's connect, the api's commands): exit 2, HTTP 503. */
export class RedisUnreachableError extends SwitchyardError {
  readonly code = ERROR_CODES.REDIS_UNREACHABLE;
  override readonly transient = true;
}

export function redisOptions(url: string, options: ConnectOptions = {}): RedisOptions {
  const parsed = new URL(url);
  registerSecret(decodeURIComponent(parsed.password));
  const base: RedisOptions = {
    lazyConnect: true,
    enableReadyCheck: true,
    connectionName: 'switchyard',
    // A connection closed mid-handshake must not hold the process for ioredis' default 2 s.
    disconnectTimeout: 50,
    ...(options.forBullmq
      ? { maxRetriesPerRequest: null }
      : { maxRetriesPerRequest: options.failFast ? 1 : 20 }),
  };
  if (options.failFast) base.retryStrategy = (times) => (times > 2 ? null : 100 * times);
  else base.retryStrategy = (times) => Math.min(100 * times, 2_000);
  if (options.answersRequests) {
    // Workers keep the defaults above (queue commands, retry them across a
    // Redis restart); an answering process fails fast and reconnects in the background.
    base.enableOfflineQueue = false;
    base.maxRetriesPerRequest = 1;
    base.commandTimeout = ANSWER_COMMAND_TIMEOUT_MS;
    base.connectTimeout = ANSWER_COMMAND_TIMEOUT_MS;
    base.retryStrategy = (times) => Math.min(100 * times, 1_000);
  }
  return base;
}

/** Connects and waits for the ready check; a clear error when Redis cannot be reached. */
export async function connectRedis(url: string, options: ConnectOptions = {}): Promise<Redis> {
  const redis = createRedis(url, options);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new RedisUnreachableError(
      `cannot reach Redis at ${safeUrl(url)} (${(error as Error).message}); start one with \`switchyard up\`, or pass --redis-url`,
    );
  }
  return redis;
}

export function createRedis(url: string, options: ConnectOptions = {}): Redis {
  const sentinel = parseSentinelUrl(url);
  const redis = sentinel
    ? new Redis({ ...redisOptions(sentinel.credentialsUrl, options), ...sentinel.options })
    : unixSocketPath(url)
      ? new Redis({ ...redisOptions(url, options), path: unixSocketPath(url)! })
      : new Redis(url, redisOptions(url, options));
  // Errors surface through commands; without a listener ioredis prints them.
  redis.on('error', () => {});
  return redis;
}

/**
 * True for the errors a command gets while Redis cannot be reached: refused or
 * dropped connections, the disabled offline queue, a command timeout, retries
 * used up. A front answers these with 503.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (error instanceof RedisUnreachableError) return true;
  if (!(error instanceof Error)) return false;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTCONN', 'EHOSTUNREACH'].includes(code))
    return true;
  return /enableOfflineQueue options is false|Command timed out|Connection is closed|Stream isn't writeable|Reached the max retries per request/i.test(
    error.message,
  );
}

/** redis+unix:///path/to/sock or unix:///path/to/sock */
function unixSocketPath(url: string): string | undefined {
  const match = /^(?:redis\+)?unix:\/\/(.+)$/.exec(url);
  return match ? match[1] : undefined;
}

/** The URL with any password hidden, for messages. */
export function safeUrl(url: string): string {
  if (SENTINEL_URL.test(url)) return url.replace(/^([^/]+\/\/[^:@/]*:)[^@/]*@/, '$1***@');
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Closes a connection without leaving a timer behind: QUIT when connected
 * (so the process can exit at once), a plain disconnect otherwise.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // fall through to a hard disconnect
    }
  }
  redis.disconnect(false);
}

/**
 * A second connection to the same Redis (with `overrides`, e.g. its own
 * connection name); like every connection here, errors surface through commands.
 */
export function duplicateRedis(redis: Redis, overrides: RedisOptions = {}): Redis {
  // A copy is lazy: without the offline queue its first command would fail
  // before it connects. The command timeout of an answering process still
  // bounds every wait.
  const copy = redis.duplicate({ ...overrides, enableOfflineQueue: true });
  copy.on('error', () => {});
  return copy;
}

// ---- Sentinel: redis+sentinel://[user:pass@]host:port[,host:port…]/<primary name>[?db=N] ----

const SENTINEL_URL = /^rediss?\+sentinel:\/\//;

export interface SentinelUrl {
  /** ioredis options that make it ask the sentinels for the current primary. */
  options: RedisOptions;
  /** redis://user:pass@sentinel/ (the credentials alone), for redisOptions' secret registration. */
  credentialsUrl: string;
}

/**
 * Parses the Sentinel form of --redis-url (README "Deployment beyond one
 * machine"). user:pass authenticate to the primary and replicas; the
 * sentinels take `sentinelUsername` / `sentinelPassword` from the query.
 * `rediss+sentinel://` uses TLS to the data nodes and to the sentinels.
 * Any other URL: undefined.
 */
export function parseSentinelUrl(url: string): SentinelUrl | undefined {
  if (!SENTINEL_URL.test(url)) return undefined;
  const match =
    /^(rediss?)\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#]+)\/([^/?#]+)\/?(?:\?([^#]*))?$/.exec(url);
  if (!match)
    throw new Error(
      `not a Sentinel URL: ${safeUrl(url)} (the form is redis+sentinel://host:26379[,host:26379…]/<primary name>[?db=N], with credentials as user:password@ before the first host)`,
    );
  const [, scheme, user, password, hostList, name, query] = match;
  const sentinels = hostList!.split(',').map((entry) => {
    const hostPort = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim());
    if (!hostPort) throw new Error(`Sentinel URL: "${entry}" is not host[:port]`);
    return { host: hostPort[1]!.replace(/^\[|\]$/g, ''), port: Number(hostPort[2] ?? 26379) };
  });
  const params = new URLSearchParams(query ?? '');
  const options: RedisOptions = { sentinels, name: decodeURIComponent(name!) };
  if (user) options.username = decodeURIComponent(user);
  if (password) options.password = decodeURIComponent(password);
  const db = params.get('db');
  if (db !== null) {
    if (!/^\d+$/.test(db)) throw new Error(`Sentinel URL: db must be a number, not "${db}"`);
    options.db = Number(db);
  }
  const sentinelUsername = params.get('sentinelUsername');
  const sentinelPassword = params.get('sentinelPassword');
  if (sentinelUsername) options.sentinelUsername = sentinelUsername;
  if (sentinelPassword) {
    options.sentinelPassword = sentinelPassword;
    registerSecret(sentinelPassword);
  }
  if (scheme === 'rediss') {
    options.tls = {};
    options.sentinelTLS = {};
    options.enableTLSForSentinelMode = true;
  }
  const credentials = user || password ? `${user ?? ''}:${password ?? ''}@` : '';
  return { options, credentialsUrl: `redis://${credentials}sentinel/` };
}
