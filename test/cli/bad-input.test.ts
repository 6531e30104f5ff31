// Bad usage and bad input: exit 2, nothing on stdout, one clear `error:` line
// on stderr that says what to fix, never a stack trace. And the other side of
// the exit-status contract: an inspection batch with a failed inspection
// exits 1.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, NATIVE_FIXTURE_DIST, uniquePrefix } from '../support/data-dir.js';
import { parseJsonInput } from '../../src/cli/parse.js';
import { freePort, startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  expectUsageError,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  runCli,
  startWorker,
  stopAll,
  stopProcess,
  type Installation,
} from './support.js';

let redis: OwnedRedis;
let root: string;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;
let fingerprint: string;

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-cli-bad-input-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', 'fixture-inspector'), { recursive: true });
  await cp(NATIVE_FIXTURE_DIST, join(dataDir, 'plugins', 'native-fixture'), { recursive: true });
  await mkdir(join(root, 'projects', 'shop'), { recursive: true });
  await writeFile(join(root, 'projects', 'shop', 'package.json'), '{}\n');
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('cli-bad-input') };
  cli = cliOn(installation);
  const refreshed = await cli(['--json', 'plugin', 'refresh']);
  expect(refreshed.code, refreshed.stderr).toBe(0);
  let scanned: Awaited<ReturnType<typeof cli>>;
  [fingerprint, , scanned] = await Promise.all([
    // Enabled without project.files.read: fixture-inspector then refuses every
    // inspection (it needs the project root), which makes a failed batch.
    reviewAndEnable(installation, 'fixture-inspector', ['project.metadata.read', 'project.operate'], {
      refresh: false,
    }),
    // Trusted, not enabled: it requests only project.metadata.read and project.files.read.
    reviewAndEnable(installation, 'native-fixture', [], { refresh: false }),
    cli(['project', 'scan', join(root, 'projects'), '--trust']),
  ]);
  expect(scanned.code, scanned.stderr).toBe(0);
});

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('bad input exits 2 with one clear line on stderr', () => {
  it('an unknown plugin', async () => {
    const results = await Promise.all([
      cli(['plugin', 'show', 'no-such-plugin']),
      cli(['inspect', 'no-such-plugin', '--all']),
      cli(['--json', 'run', 'no-such-plugin', 'shop', 'fixture.echo', '--yes']),
    ]);
    for (const result of results) expectUsageError(result, /unknown plugin.*no-such-plugin/);
  });

  it('an unknown project', async () => {
    const results = await Promise.all([
      cli(['run', 'fixture-inspector', 'no-such-project', 'fixture.echo', '--yes']),
      cli(['--json', 'inspect', 'fixture-inspector', 'no-such-project']),
      cli(['project', 'trust', 'no-such-project']),
    ]);
    for (const result of results) expectUsageError(result, /unknown project.*no-such-project/);
  });

  it('an unknown operation, batch or schedule, naming the list that shows the known ones', async () => {
    const [cancel, wait, batch, schedule] = await Promise.all([
      cli(['op', 'cancel', 'nope']),
      cli(['op', 'wait', 'nope']),
      cli(['batch', 'show', 'nope']),
      cli(['--json', 'schedule', 'remove', 'nope']),
    ]);
    expectUsageError(cancel, /unknown operation "nope" \(op list shows the known ones\)/);
    expectUsageError(wait, /unknown operation "nope" \(op list shows the known ones\)/);
    expectUsageError(batch, /unknown batch "nope" \(batch list shows the known ones\)/);
    expectUsageError(schedule, /unknown schedule "nope" \(schedule list shows the known ones\)/);
    expect(JSON.parse(schedule.stdout)).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('a project scan whose directories clash on an id names fixes that work (scan has no --id)', async () => {
    const dir = join(root, 'clashing');
    await mkdir(join(dir, 'A B'), { recursive: true });
    await mkdir(join(dir, 'a-b'), { recursive: true });
    // The clash is refused on its own (exit 1, the others registered): its line names the fixes.
    const scanned = await cli(['project', 'scan', dir]);
    expect(scanned.code, scanned.stderr).toBe(1);
    expect(scanned.stderr).toMatch(/1 directory was refused; 1 registered/);
    const line = scanned.stdout.split('\n').find((text) => /project id a-b clashes/.test(text)) ?? '';
    expect(line).toContain(`refused ${join(dir, 'a-b')}: `);
    expect(line).toContain('rename one of the directories');
    expect(line).toContain(`\`project add ${join(dir, 'a-b')} --id <other-id>\``);
    expect(line).not.toMatch(/with --id\)/);
  });

  it('malformed --input JSON', async () => {
    const line = expectUsageError(
      await cli(['run', 'fixture-inspector', 'shop', 'fixture.echo', '--input', '{x:1', '--yes']),
      /--input is not valid JSON/,
    );
    expect(line).toContain('--input \'{"key":"value"}\''); // it shows how to write it
  });

  it('an --input that is not one JSON object is refused before anything is queued; none is {}', async () => {
    for (const input of ['[1,2]', '"text"', '7', 'null']) {
      expectUsageError(
        await cli(['run', 'fixture-inspector', 'shop', 'fixture.echo', '--input', input, '--yes']),
        /--input must be one JSON object/,
      );
    }
    expect(parseJsonInput(undefined)).toEqual({});
    expect(parseJsonInput('{"a":1}')).toEqual({ a: 1 });
  });

  it('a missing --yes on trust, enable and run', async () => {
    const results = await Promise.all([
      cli(['plugin', 'trust', 'fixture-inspector', '--fingerprint', fingerprint]),
      cli(['plugin', 'enable', 'fixture-inspector', '--scope', 'project.metadata.read']),
      cli(['run', 'fixture-inspector', 'shop', 'fixture.echo', '--input', '{}']),
    ]);
    for (const result of results) expectUsageError(result, /confirm with --yes/);
    // Each says what the confirmation is for: trust and enable change what code may run, run acts on a project.
    expect(results[0]!.stderr).toMatch(/this changes what code may run/);
    expect(results[1]!.stderr).toMatch(/this changes what code may run/);
    expect(results[2]!.stderr).toMatch(
      /this runs the action fixture\.echo of fixture-inspector on project shop, which may change it; confirm with --yes/,
    );
    // Nothing was queued without the confirmation.
    const operations = onlyJson<unknown[]>(await cli(['--json', 'op', 'list']));
    expect(operations).toEqual([]);
  });

  it('a fingerprint other than the current one', async () => {
    const wrong = fingerprint.replace(/^./, (first) => (first === '0' ? '1' : '0'));
    const [differs, malformed] = await Promise.all([
      cli(['plugin', 'trust', 'fixture-inspector', '--fingerprint', wrong, '--yes']),
      cli(['plugin', 'trust', 'fixture-inspector', '--fingerprint', 'abc123', '--yes']),
    ]);
    const line = expectUsageError(differs, /differs from the current/);
    expect(line).toContain('plugin show');
    expectUsageError(malformed, /fingerprint.*plugin show/);
  });

  it('a scope the plugin did not request', async () => {
    const [notRequested, unknown] = await Promise.all([
      cli(['plugin', 'enable', 'native-fixture', '--scope', 'project.operate', '--yes']),
      cli(['plugin', 'enable', 'fixture-inspector', '--scope', 'project.files.write', '--yes']),
    ]);
    expectUsageError(notRequested, /project\.operate.*not requested/);
    expectUsageError(unknown, /unknown scope.*project\.files\.write/);
    const shown = onlyJson<{ enabled: boolean; grantedScopes: string[] }>(
      await cli(['--json', 'plugin', 'show', 'native-fixture']),
    );
    expect(shown).toMatchObject({ enabled: false, grantedScopes: [] });
  });

  it('a project path that does not exist', async () => {
    const missing = join(root, 'no-such-dir');
    const results = await Promise.all([
      cli(['project', 'add', missing]),
      cli(['project', 'scan', missing, '--trust']),
    ]);
    for (const result of results) expectUsageError(result, new RegExp(`${missing}.*does not exist`));
  });

  it('a Redis that cannot be reached names the URL and how to get one', async () => {
    const port = await freePort(); // bound and closed again: nothing listens there
    const url = `redis://127.0.0.1:${port}`;
    const result = await runCli([
      '--data-dir',
      installation.dataDir,
      '--redis-url',
      url,
      '--prefix',
      installation.prefix!,
      'plugin',
      'list',
    ]);
    const line = expectUsageError(result, /Redis/);
    expect(line).toContain(`127.0.0.1:${port}`);
    expect(line).toMatch(/switchyard up|--redis-url/);
  });

  it('an unknown option or command', async () => {
    const [late, early, command] = await Promise.all([
      cli(['plugin', 'list', '--no-such-option']),
      cli(['--no-such-option', 'plugin', 'list']),
      cli(['no-such-command']),
    ]);
    expectUsageError(late, /unknown option.*--no-such-option/);
    expectUsageError(early, /unknown option.*--no-such-option/);
    expectUsageError(command, /unknown command.*no-such-command/);
  });

  it('a duration no timer can wait, or a priority hold out of range', async () => {
    // Node would fire a timer over 2^31 - 1 ms at once: refused before anything starts.
    const [timeout, every, hold] = await Promise.all([
      cli(['worker', '--call-timeout', '2147483648']),
      cli(['scheduler', '--health-every', '1e12']),
      cli(['worker', '--operation-priority', '600001']),
    ]);
    expectUsageError(timeout, /--call-timeout must be a whole number of milliseconds from 1 to 2147483647/);
    expectUsageError(every, /--health-every must be a whole number of milliseconds from 1 to 2147483647/);
    expectUsageError(hold, /--operation-priority must be an integer from 0 to 600000/);
  });
});

describe('audit --since: a filter, not a timer', () => {
  it('takes 30d and a date; a date in the future or a word exits 2', async () => {
    const [month, date, future, word] = await Promise.all([
      cli(['--json', 'audit', '--since', '30d']),
      cli(['--json', 'audit', '--since', '2020-01-01']),
      cli(['audit', '--since', '2099-01-01']),
      cli(['audit', '--since', 'soon']),
    ]);
    for (const ok of [month, date]) {
      expect(ok.code, ok.stderr).toBe(0);
      expect(onlyJson<{ action: string }[]>(ok).map((entry) => entry.action)).toContain('plugin.trust');
    }
    expectUsageError(future, /--since 2099-01-01 is in the future/);
    expectUsageError(word, /--since must be a duration \(30s, 15m, 2h, 30d\) or a date or time/);
  });
});

describe('failed work exits 1', () => {
  it('an inspection batch with a failed inspection', async () => {
    const worker = await startWorker(installation, 2);
    try {
      const result = await cli(['--json', 'inspect', 'fixture-inspector', '--all'], 45_000);
      expect(result.code, result.stderr).toBe(1);
      const batch = onlyJson<{
        total: number;
        succeeded: number;
        failed: number;
        results: { projectId: string; status: string; error?: { code: string; message: string } }[];
      }>(result);
      expect(batch).toMatchObject({ total: 1, succeeded: 0, failed: 1 });
      expect(batch.results).toEqual([
        expect.objectContaining({
          projectId: 'shop',
          status: 'failed',
          error: expect.objectContaining({ message: expect.stringContaining('project.files.read') }),
        }),
      ]);
      expect(result.stderr).not.toMatch(/^\s{4}at /m);
      expect(result.stderr).toMatch(/1 of 1 inspections failed/);
      // The same batch watched: the same status, so `inspect --no-wait` + `batch show --watch` works in scripts.
      const batchId = (batch as unknown as { batchId: string }).batchId;
      const [watched, shown] = await Promise.all([
        cli(['batch', 'show', batchId, '--watch']),
        cli(['batch', 'show', batchId]),
      ]);
      expect(watched.code, watched.stderr).toBe(1);
      expect(watched.stderr).toMatch(/1 of 1 inspections failed/);
      expect(shown.code, shown.stderr).toBe(0);
    } finally {
      await stopProcess(worker);
    }
  });
});
