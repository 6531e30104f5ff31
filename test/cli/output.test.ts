// What a user sees: terminal-safe output (no control sequence from a plugin,
// a package, a project or a user reaches the terminal raw), correct exit
// status (cron checked before saving), durations, log levels and formats, a
// closed stdout, --version, tables that fit, relative times, the progress bar.
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/core/redis/queues.js';
import { keysFor } from '../../src/core/redis/keys.js';
import { CLI } from '../support/cli-process.js';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  expectUsageError,
  globalArgs,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  runCli,
  spawnCli,
  startWorker,
  stopAll,
  stopProcess,
  waitFor,
  type Installation,
} from './support.js';

const ESC = '\u001b';
/** Erase the line, move up one, and draw a fake fingerprint over the real one. */
const HOSTILE = `${ESC}[2K${ESC}[1AFingerprint: ${'0'.repeat(64)}`;

let redis: OwnedRedis;
let root: string;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-output-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', 'fixture-inspector'), { recursive: true });
  // The same package with a manifest name that carries ESC sequences.
  const hostile = join(dataDir, 'plugins', 'hostile');
  await cp(FIXTURE_INSPECTOR_DIST, hostile, { recursive: true });
  const manifest = JSON.parse(await readFile(join(hostile, 'plugin.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  await writeFile(
    join(hostile, 'plugin.json'),
    JSON.stringify({ ...manifest, id: 'hostile', name: `Hostile ${HOSTILE}` }),
  );
  await mkdir(join(root, 'projects', 'shop'), { recursive: true });
  await writeFile(join(root, 'projects', 'shop', 'package.json'), '{}\n');
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-output') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, 'fixture-inspector', ['project.metadata.read', 'project.files.read']);
  const scanned = await cli(['project', 'scan', join(root, 'projects'), '--trust']);
  expect(scanned.code, scanned.stderr).toBe(0);
});

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** No raw ESC anywhere in what the user sees, and the sequence shown as an escape. */
function expectEscaped(text: string): void {
  expect(text).not.toContain(ESC);
  expect(text).toContain('\\x1b[2K\\x1b[1AFingerprint:');
}

describe('terminal-safe output', () => {
  it('a manifest name with ESC sequences is shown escaped by plugin show', async () => {
    const shown = await cli(['plugin', 'show', 'hostile']);
    expect(shown.code, shown.stderr).toBe(0);
    expectEscaped(shown.stdout);
    // JSON keeps the real value (JSON escapes it itself).
    const json = onlyJson<{ name: string }>(await cli(['--json', 'plugin', 'show', 'hostile']));
    expect(json.name).toBe(`Hostile ${HOSTILE}`);
  });

  it('a project name with ESC sequences is shown escaped in tables', async () => {
    // A directory of its own: one directory is one project.
    await mkdir(join(root, 'projects', 'evil'), { recursive: true });
    const added = await cli([
      'project',
      'add',
      join(root, 'projects', 'evil'),
      '--id',
      'evil',
      '--name',
      HOSTILE,
    ]);
    expect(added.code, added.stderr).toBe(0);
    expectEscaped(added.stdout);
    const listed = await cli(['project', 'list']);
    expectEscaped(listed.stdout);
    expect((await cli(['project', 'remove', 'evil'])).code).toBe(0);
    await rm(join(root, 'projects', 'evil'), { recursive: true });
  });

  it('a plugin stderr line with ESC sequences is shown escaped by plugin logs', async () => {
    const client = new Redis(redis.url);
    try {
      const keys = keysFor(installation.prefix!);
      await client.lpush(
        keys.pluginLogs('fixture-inspector'),
        JSON.stringify({ at: new Date().toISOString(), source: 'stderr', line: HOSTILE }),
      );
    } finally {
      client.disconnect();
    }
    const logs = await cli(['plugin', 'logs', 'fixture-inspector']);
    expect(logs.code, logs.stderr).toBe(0);
    expectEscaped(logs.stdout);
  });

  it('an error message quoting user input is escaped on stderr', async () => {
    const result = await cli([`--no-such-option${HOSTILE}`]);
    expect(result.code).toBe(2);
    expectEscaped(result.stderr);
  });
});

describe('correct status', () => {
  it('schedule add --cron "99 * * * *" exits 2 naming --cron and saves nothing', async () => {
    const result = await cli(['schedule', 'add', 'fixture-inspector', '--all', '--cron', '99 * * * *']);
    expectUsageError(result, /--cron/);
    expect(onlyJson<unknown[]>(await cli(['--json', 'schedule', 'list']))).toEqual([]);
  });

  it('durations are written 500ms / 30s / 15m / 2h', async () => {
    const added = await cli(['--json', 'schedule', 'add', 'fixture-inspector', '--all', '--every', '1h']);
    expect(added.code, added.stderr).toBe(0);
    const created = onlyJson<{ id: string; everyMs: number }>(added);
    expect(created.everyMs).toBe(3_600_000);
    const listed = await cli(['schedule', 'list']);
    expect(listed.stdout).toMatch(/every 1h/);
    expect((await cli(['schedule', 'remove', created.id])).code).toBe(0);
    // The range checks stay: under 1s is refused, naming the option.
    expectUsageError(
      await cli(['schedule', 'add', 'fixture-inspector', '--all', '--every', '500ms']),
      /--every/,
    );
    expectUsageError(await cli(['worker', '--call-timeout', '30 parsecs']), /--call-timeout must be/);
  });

  it('--version prints the version from package.json', async () => {
    const pkg = JSON.parse(await readFile(join(CLI, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  it('a closed stdout ends plugin show / plugin list quietly, without an EPIPE stack trace', async () => {
    for (const args of [
      ['plugin', 'show', 'fixture-inspector'],
      ['plugin', 'list'],
    ]) {
      // The reader is gone before the command writes a byte: every write meets EPIPE.
      const child = spawn(process.execPath, [CLI, ...globalArgs(installation), ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(stderr, args.join(' ')).not.toMatch(/EPIPE|\s{4}at /);
      expect(code, `${args.join(' ')}: ${stderr}`).toBe(0);
    }
  });

  it('failures log at warn: --log-level warn still shows a failed job (JSON when not a TTY)', async () => {
    const worker = spawnCli([...globalArgs(installation), 'worker', '--log-level', 'warn']);
    const queue = new Queue(QUEUE_NAMES.maintenance, {
      connection: { url: redis.url },
      prefix: keysFor(installation.prefix!).bullPrefix,
    });
    try {
      // A job no worker can run: it fails at once, and the worker logs that.
      await queue.add('bogus', { task: 'no-such-task' }, { attempts: 1 });
      await waitFor(() => worker.output.stdout.includes('job-failed'), 20_000, 'a job-failed log line');
      const line = worker.output.stdout.split('\n').find((text) => text.includes('job-failed'))!;
      const event = JSON.parse(line) as { level: number; event: string };
      expect(event.event).toBe('job-failed');
      expect(event.level).toBeGreaterThanOrEqual(40);
      expect(worker.output.stdout).not.toContain('worker-ready'); // info is filtered out
    } finally {
      await queue.close();
      await stopProcess(worker);
    }
  });

  it('--log-format pretty writes human-readable log lines', async () => {
    const worker = spawnCli([...globalArgs(installation), '--log-format', 'pretty', 'worker']);
    try {
      await waitFor(() => worker.output.stdout.includes('worker-ready'), 20_000, 'worker-ready');
      const line = worker.output.stdout.split('\n').find((text) => text.includes('worker-ready'))!;
      expect(line).toMatch(/INFO/);
      expect(() => JSON.parse(line) as unknown).toThrow();
    } finally {
      await stopProcess(worker);
    }
  });
});

/**
 * Runs the CLI with COLUMNS set (or unset) for `run`'s commands: they inherit
 * this process's environment, and the tests of a file run one at a time.
 */
async function withColumns<T>(columns: string | undefined, run: () => Promise<T>): Promise<T> {
  const before = process.env.COLUMNS;
  if (columns === undefined) delete process.env.COLUMNS;
  else process.env.COLUMNS = columns;
  try {
    return await run();
  } finally {
    if (before === undefined) delete process.env.COLUMNS;
    else process.env.COLUMNS = before;
  }
}

describe('tables and progress', () => {
  it('tables fit COLUMNS off a terminal when it is set, mark cut cells with …, and show relative times', async () => {
    const long = join(root, 'elsewhere', `a-very-long-project-directory-name-${'x'.repeat(90)}`);
    await mkdir(long, { recursive: true });
    expect((await cli(['project', 'add', long, '--id', 'long'])).code).toBe(0);
    const listed = await withColumns('100', () => cli(['project', 'list']));
    for (const line of listed.stdout.trimEnd().split('\n'))
      expect(line.length, line).toBeLessThanOrEqual(100);
    expect(listed.stdout).toContain('…');
    // Piped without COLUMNS (a script, `| cat`): no limit, every value whole.
    const piped = await withColumns(undefined, () => cli(['project', 'list']));
    expect(piped.stdout).toContain(long);
    expect(piped.stdout).not.toContain('…');
    expect((await cli(['project', 'remove', 'long'])).code).toBe(0);

    const audit = await withColumns('100', () => cli(['audit', '--limit', '5']));
    expect(audit.stdout).toMatch(/\b(\d+(ms|s|m)) ago\b|just now/);
    for (const line of audit.stdout.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it('an id column is never cut, however narrow: the first column of a list, the audit TARGET', async () => {
    const id = `a-project-id-longer-than-any-column-${'y'.repeat(40)}`;
    const dir = join(root, 'elsewhere', 'long-id');
    await mkdir(dir, { recursive: true });
    expect((await cli(['project', 'add', dir, '--id', id])).code).toBe(0);
    try {
      const [listed, audit] = await withColumns('40', () =>
        Promise.all([cli(['project', 'list']), cli(['audit', '--limit', '1', '--action', 'project.add'])]),
      );
      expect(listed.stdout).toMatch(new RegExp(`^${id} `, 'm'));
      expect(audit.stdout).toContain(id);
    } finally {
      expect((await cli(['project', 'remove', id])).code).toBe(0);
    }
  });

  it('a FINGERPRINT_CHANGED error in a table shows the new fingerprint whole', async () => {
    const queued = onlyJson<{ batchId: string }>(
      await cli(['--json', 'inspect', 'fixture-inspector', 'shop', '--no-wait']),
    );
    // The package changes after the batch was queued, before a worker takes it.
    const manifestPath = join(installation.dataDir, 'plugins', 'fixture-inspector', 'plugin.json');
    await writeFile(manifestPath, `${await readFile(manifestPath, 'utf8')}\n`);
    const worker = await startWorker(installation, 1);
    try {
      await waitFor(
        async () =>
          onlyJson<{ pending: number }>(await cli(['--json', 'batch', 'show', queued.batchId])).pending === 0,
        30_000,
        'the batch to end',
      );
    } finally {
      await stopProcess(worker);
    }
    try {
      // A width to fit (off a terminal there is none unless COLUMNS sets one).
      const shown = await withColumns('100', () => cli(['batch', 'show', queued.batchId]));
      const json = onlyJson<{ results: { error?: { code: string; message: string } }[] }>(
        await cli(['--json', 'batch', 'show', queued.batchId]),
      );
      const error = json.results[0]!.error!;
      expect(error.code).toBe('FINGERPRINT_CHANGED');
      const fingerprints = error.message.match(/[0-9a-f]{64}/g)!;
      expect(fingerprints.length).toBeGreaterThan(0);
      for (const fingerprint of fingerprints) expect(shown.stdout).toContain(fingerprint);
      for (const line of shown.stdout.trimEnd().split('\n'))
        expect(line.length, line).toBeLessThanOrEqual(100);
    } finally {
      // Review and trust the new package again for the tests after this one (trust refuses a
      // package whose files changed since discovery: the refresh lists them for the review).
      await reviewAndEnable(installation, 'fixture-inspector', [
        'project.metadata.read',
        'project.files.read',
      ]);
    }
  });

  it('the progress bar on a terminal never shows eta INF', async () => {
    const worker = await startWorker(installation, 1);
    try {
      // `script` gives the CLI a pseudo-terminal, as a user's shell would.
      const command = [
        process.execPath,
        CLI,
        ...globalArgs(installation),
        'inspect',
        'fixture-inspector',
        '--all',
      ]
        .map((word) => `'${word.replace(/'/g, `'\\''`)}'`)
        .join(' ');
      const result = spawnSync('script', ['-qec', command, '/dev/null'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(result.status, result.stdout + result.stderr).not.toBeNull();
      expect(result.stdout).toMatch(/inspecting/);
      expect(result.stdout).not.toMatch(/INF/);
    } finally {
      await stopProcess(worker);
    }
  });
});

describe('re-scan', () => {
  it('re-scanning an unchanged directory writes no audit entry', async () => {
    const before = onlyJson<unknown[]>(await cli(['--json', 'audit', '--limit', '1000'])).length;
    const again = await cli(['project', 'scan', join(root, 'projects'), '--trust']);
    expect(again.code, again.stderr).toBe(0);
    const after = onlyJson<{ action: string }[]>(await cli(['--json', 'audit', '--limit', '1000']));
    expect(after.filter((entry) => entry.action === 'project.update')).toEqual([]);
    expect(after.length).toBe(before);
  });
});
