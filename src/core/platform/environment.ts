// Every SWITCHYARD_* environment variable, in one table: what it sets, its
// value when unset, and who reads (or sets) it. Host code reads them only
// through readEnv(), whose name parameter accepts only a name listed here, so
// a new variable cannot be read without a row. docs/ENVIRONMENT.md shows the
// table; test/lint/environment.test.ts fails when the two differ, when code
// mentions a SWITCHYARD_* name that has no row, or when src/ reads one
// directly. Two readers cannot import this room and keep their own read: the
// safety room (below platform) and the SDK (published on its own). Rows for
// the tests, CI and the compose file are listed too, so the table is complete.
import { InvalidInputError } from './errors.js';

export interface EnvironmentVariable {
  /** What it sets, in one sentence. */
  meaning: string;
  /** What applies when it is unset. */
  default: string;
  /** The files that read or set it (paths from the repository root). */
  usedBy: readonly string[];
}

export const ENVIRONMENT = {
  SWITCHYARD_DATA_DIR: {
    meaning:
      'The data directory: plugin packages (`plugins/`), the embedded Redis of `up` (`redis/`), the api token of `up`.',
    default: '`$XDG_DATA_HOME/switchyard`, else `~/.local/share/switchyard` (`--data-dir` wins)',
    usedBy: ['src/cli/config.ts', 'Dockerfile', 'docker-compose.yml'],
  },
  SWITCHYARD_REDIS_URL: {
    meaning:
      'The Redis to use (`redis://`, `rediss://`, `redis+unix://`, `redis+sentinel://`); set, it also asks for local mode over the default profile.',
    default: 'the embedded Redis that `switchyard up` started for the data dir (`--redis-url` wins)',
    usedBy: ['src/cli/config.ts', 'src/cli/target.ts', 'docker-compose.yml'],
  },
  SWITCHYARD_PREFIX: {
    meaning: 'The Redis key prefix, so several installations can share one Redis.',
    default: '`switchyard` (`--prefix` wins)',
    usedBy: ['src/cli/config.ts', 'docker-compose.yml'],
  },
  SWITCHYARD_URL: {
    meaning: 'Remote mode: the HTTP API every command goes through.',
    default: "the profile's URL, else local mode (`--url` wins)",
    usedBy: ['src/cli/target.ts'],
  },
  SWITCHYARD_TOKEN: {
    meaning: 'Remote mode: the API token to send (whoami names it as the source).',
    default: "the profile's token, for the profile's URL only (`--token` wins)",
    usedBy: ['src/cli/target.ts'],
  },
  SWITCHYARD_PROFILE: {
    meaning: 'Remote mode: the profile `switchyard login` saved to use.',
    default: '`default`, when it exists (`--profile` wins)',
    usedBy: ['src/cli/target.ts'],
  },
  SWITCHYARD_LOG_FORMAT: {
    meaning:
      'Process logs as `pretty` or `json`; the CLI sets it from `--log-format` so the processes it starts inherit the choice.',
    default: '`pretty` on a terminal, `json` otherwise',
    usedBy: ['src/core/platform/log.ts', 'src/cli/main.ts'],
  },
  SWITCHYARD_LOG_LEVEL: {
    meaning: 'The log level of a logger made without an explicit `--log-level`.',
    default: '`info`',
    usedBy: ['src/core/platform/log.ts'],
  },
  SWITCHYARD_WAIT_GIVE_UP_MS: {
    meaning:
      'Remote waits: how long the CLI keeps trying an api it cannot reach before it gives up (exit 2); tests shorten it.',
    default: '60000 (60 s)',
    usedBy: ['src/cli/event-stream.ts'],
  },
  SWITCHYARD_API_STREAMS_PER_TOKEN: {
    meaning: 'The api: event streams one token may hold open at once (more get 429 TOO_MANY_STREAMS).',
    default: '16',
    usedBy: ['src/api/stream-limits.ts'],
  },
  SWITCHYARD_API_STREAMS: {
    meaning: 'The api: event streams one api process holds open at once, all tokens together.',
    default: '1000',
    usedBy: ['src/api/stream-limits.ts'],
  },
  SWITCHYARD_API_RATE_LIMIT: {
    meaning:
      'The api: requests one token (one client address without a token) may make per rate window under /api/ (more get 429 TOO_MANY_REQUESTS with Retry-After).',
    default: '1200',
    usedBy: ['src/api/request-budget.ts'],
  },
  SWITCHYARD_API_RATE_WINDOW_MS: {
    meaning: 'The api: the rate window of SWITCHYARD_API_RATE_LIMIT, in milliseconds.',
    default: '60000 (1 minute)',
    usedBy: ['src/api/request-budget.ts'],
  },
  SWITCHYARD_API_REQUEST_BUDGET_MS: {
    meaning:
      'The api: how long one request (not an event stream) may take before it is answered 503 REQUEST_TOO_SLOW.',
    default: '10000 (10 s)',
    usedBy: ['src/api/request-budget.ts'],
  },
  SWITCHYARD_API_STREAM_KEEPALIVE_MS: {
    meaning: 'The api: how often an open event stream sends a keep-alive comment, in ms.',
    default: '15000 (15 s)',
    usedBy: ['src/api/stream-limits.ts'],
  },
  SWITCHYARD_RETENTION_DAYS: {
    meaning:
      'Finished batches and operations are deleted after this many days (the newest two finished batches of each plugin stay; `plugin set --retention-days/--retention-batches` overrides it per plugin).',
    default: '7',
    usedBy: ['src/core/redis/queues.ts'],
  },
  SWITCHYARD_INSPECT_ORDER: {
    meaning:
      'A benchmark switch: `fifo` queues every slice of a batch at once in the order batches came, as before the fair queue (docs/adr/0010-fair-share-inspections.md), so bench/fair-share.mjs can compare on one build; `fair` is the product.',
    default: '`fair`',
    usedBy: ['src/core/work/batches/fair-queue.ts', 'bench/fair-share.mjs'],
  },
  SWITCHYARD_FAILED_JOB_HOURS: {
    meaning: 'Failed BullMQ jobs are kept this many hours, for inspection.',
    default: '24',
    usedBy: ['src/core/redis/queues.ts'],
  },
  SWITCHYARD_ROLLOUT_SELF_APPROVAL: {
    meaning:
      'Host policy: `1` lets the admin who created a rollout approve it (an installation with one admin); otherwise another admin must. Read where rollouts are approved (the api, a local CLI).',
    default: 'unset: another admin approves',
    usedBy: ['src/core/work/rollouts/rollout-service.ts'],
  },
  SWITCHYARD_SCHEDULE_MIN_INTERVAL: {
    meaning:
      'Host policy: the shortest interval a schedule may have (`--every`, or the gap between two runs of a `--cron` pattern), as a duration (`30s`, `5m`) or milliseconds; read where schedules are added or edited (the api, a local CLI).',
    default: '`1m`',
    usedBy: ['src/core/work/upkeep/schedule-store.ts', 'test/cli/schedules.test.ts'],
  },
  SWITCHYARD_SPAWNER: {
    meaning:
      '`process-group` forces the fallback containment (execa in a process group) instead of the native spawn helper.',
    default: 'the native helper where it was built (Linux), else process groups',
    usedBy: [
      'src/core/supervision/containment.ts',
      'bench/spawn-path.mjs',
      'test/core/supervision/containment.test.ts',
    ],
  },
  SWITCHYARD_CONFINEMENT: {
    meaning:
      "`off` turns off the kernel confinement of plugin calls (Landlock signal scoping); the helper's subreaper containment stays.",
    default: 'on where the kernel supports it',
    usedBy: [
      'src/core/supervision/containment.ts',
      'test/queue/keeper-attack.test.ts',
      'test/core/supervision/self-containment.test.ts',
    ],
  },
  SWITCHYARD_CALL_NAMESPACES: {
    meaning:
      "`off` starts confined calls without their own IPC and mount namespaces (so without the disk budget's tmpfs): to measure what they cost (bench/confinement.mjs) or to tell whether they are the cause of a problem. `plugin show` and /healthz then say they are missing.",
    default: 'on where the helper can create them (a root worker)',
    usedBy: [
      'src/core/supervision/containment.ts',
      'bench/confinement.mjs',
      'test/core/supervision/call-isolation.test.ts',
    ],
  },
  SWITCHYARD_REDACT_ENV: {
    meaning:
      'Comma-separated names of more environment variables whose values are secrets to redact, whatever their names.',
    default: 'none (variables named like secrets are redacted anyway)',
    usedBy: ['src/core/safety/redact.ts'],
  },
  SWITCHYARD_PLUGIN_PROTOCOL: {
    meaning:
      "Set in every plugin process to the protocol version (`switchyard.plugin/v1`) by the SDK's `pluginEnvironment()`, which the host uses; the host never reads it.",
    default: 'always set for plugins',
    usedBy: ['sdk/src/constants.ts', 'test/core/faults-stderr-environment.test.ts'],
  },
  SWITCHYARD_LONG_OP_MS: {
    meaning:
      'Tests: how long the long-operation tests run their operation, in ms (180000 for the full 3 minutes).',
    default: '40000',
    usedBy: ['test/queue/long-operations.test.ts'],
  },
  SWITCHYARD_NODE24_PACKAGE: {
    meaning: 'CI: the npm package that brings the Node 24 binary for the second test step.',
    default: '`node@24`',
    usedBy: ['.ci/run'],
  },
  SWITCHYARD_PLUGINS_DIR: {
    meaning: 'docker compose: the host directory mounted read-only as the plugin packages.',
    default: '`./plugins`',
    usedBy: ['docker-compose.yml'],
  },
  SWITCHYARD_CERTS_DIR: {
    meaning: "docker compose: the host directory with Redis's TLS certificates and the CA.",
    default: '`./certs`',
    usedBy: ['docker-compose.yml'],
  },
  SWITCHYARD_API_BIND: {
    meaning: "docker compose: the host address the api's port 7317 is published on.",
    default: '`127.0.0.1`',
    usedBy: ['docker-compose.yml'],
  },
} as const satisfies Record<`SWITCHYARD_${string}`, EnvironmentVariable>;

export type EnvironmentName = keyof typeof ENVIRONMENT;

/** The value of a listed variable in `env` (undefined when unset). */
export function readEnv(name: EnvironmentName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/** A whole number of at least 1 from `name`, else `fallback` when unset or empty; anything else is refused. */
export function readWholeNumberEnv(
  name: EnvironmentName,
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const value = readEnv(name, env);
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidInputError(`${name} must be a whole number of at least 1, not ${JSON.stringify(value)}`);
  return Number(value);
}
