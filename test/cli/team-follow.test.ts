// Team mode's follows and waits, live (test/support/team.ts): op logs
// --follow, plugin logs --follow, op wait, inspect and batch show --watch
// through the api print what local mode prints; Ctrl-C stops following and
// leaves the work running; a remote op wait outlives a crowded event stream
// and an api restart.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, call, globalArgs, spawnCli } from '../api/support.js';
import { RELATIVE_TIME, connectedTo, json, useTeam, type Run } from '../support/team.js';
import { sleep, waitFor } from '../support/wait.js';
import { installQueuePlugin } from '../support/workers.js';

const team = useTeam('cli-team-follow');
const { local, remote, startAs } = team;

beforeAll(async () => {
  await team.logIn('admin');
  const scanned = await remote(['project', 'scan', team.projectsDir, '--trust']);
  expect(scanned.code, scanned.stderr).toBe(0);
}, 90_000);

describe('remote follows and waits, live', () => {
  const QUEUE = 'queue-plugin';
  let packageDir = '';

  /** An operation whose call writes `tick <n> <action>` to stderr every 200 ms for `ms`; its id. */
  const startTicking = async (action: string, ms: number) =>
    json<{ id: string }>(
      await remote([
        '--json',
        'run',
        QUEUE,
        'shop',
        action,
        '--input',
        JSON.stringify({ sleepMs: ms, stderrEveryMs: 200 }),
        '--yes',
      ]),
    ).id;

  beforeAll(async () => {
    packageDir = await installQueuePlugin(team.setup.installation.dataDir);
    expect((await remote(['plugin', 'refresh'])).code).toBe(0);
    const { fingerprint } = json<{ fingerprint: string }>(await remote(['--json', 'plugin', 'show', QUEUE]));
    const trusted = await remote(['plugin', 'trust', QUEUE, '--fingerprint', fingerprint, '--yes']);
    expect(trusted.code, trusted.stderr).toBe(0);
    // The fixture keeps its bookkeeping in its package directory and finds its worker in /proc.
    const policy = await remote([
      'plugin',
      'set',
      QUEUE,
      '--allow-write',
      packageDir,
      '--allow-read',
      '/proc',
    ]);
    expect(policy.code, policy.stderr).toBe(0);
    const scopes = ALL_SCOPES.flatMap((scope) => ['--scope', scope]);
    const enabled = await remote(['plugin', 'enable', QUEUE, ...scopes, '--yes']);
    expect(enabled.code, enabled.stderr).toBe(0);
  }, 60_000);

  it('op logs --follow prints the stderr as the call writes it and ends (exit 0) when the operation ends', async () => {
    // Long enough that a CLI started under load still sees it running.
    const id = await startTicking('ticking', 8_000);
    const follow = startAs('admin', ['op', 'logs', id, '--follow']);
    await waitFor(
      'the remote follow to print a tick',
      async () => follow.output.stdout.includes('tick 1 ticking'),
      20_000,
    );
    // Printed while the call still ran.
    expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('running');
    const followed = await follow.ended;
    expect(followed.code, followed.stderr).toBe(0);
    expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('succeeded');
    // Every entry the operation has, each once, as `op logs` prints them afterwards.
    const after = await local(['op', 'logs', id]);
    // The relative time is right-aligned: its padding changes with its length.
    const timeless = (text: string) =>
      text.replace(/ +(?=\d+(ms|s|m|h|d|y) ago|just now)/g, ' ').replace(RELATIVE_TIME, '<ago>');
    expect(timeless(followed.stdout)).toBe(timeless(after.stdout));
    expect(followed.stdout.match(/tick \d+ ticking/g)!.length).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('plugin logs --follow prints an entry written after it started; SIGINT ends it as it ends a local one', async () => {
    const first = await startTicking('before', 300);
    expect((await remote(['op', 'wait', first])).code).toBe(0);
    const followers = [
      startAs('admin', ['plugin', 'logs', QUEUE, '--follow', '--limit', '1']),
      startAs('local-admin', [
        ...globalArgs(team.setup.installation),
        'plugin',
        'logs',
        QUEUE,
        '--follow',
        '--limit',
        '1',
      ]),
    ];
    // Each printed the newest entry: it follows now.
    for (const follower of followers)
      await waitFor('a follow to start', async () => follower.output.stdout !== '', 20_000);
    const id = await startTicking('after', 1_000);
    for (const follower of followers)
      await waitFor(
        'a follow to print a new entry',
        async () => follower.output.stdout.includes('tick 2 after'),
        20_000,
      );
    for (const follower of followers) follower.child.kill('SIGINT');
    const [a, b] = await Promise.all(followers.map((follower) => follower.ended));
    expect([a!.code, a!.stderr]).toEqual([b!.code, b!.stderr]);
    expect(a!.code).toBe(0);
    expect((await remote(['op', 'wait', id])).code).toBe(0);
  }, 60_000);

  it('op wait, inspect --wait and batch show --watch: the JSON of local mode', async () => {
    // Both modes wait for the same operation at the same time.
    const id = await startTicking('waited', 1_500);
    const [a, b] = await Promise.all([
      remote(['--json', 'op', 'wait', id]),
      local(['--json', 'op', 'wait', id]),
    ]);
    expect(json<{ state: string }>(a)).toMatchObject({ state: 'succeeded' });
    expect(json(a)).toEqual(json(b));
    // Inspections that take a second each.
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '1000');
    try {
      const batchId = json<{ batchId: string }>(
        await remote(['--json', 'inspect', QUEUE, 'shop', 'blog', '--no-wait']),
      ).batchId;
      const watch = ['--json', 'batch', 'show', batchId, '--watch'];
      const [c, d] = await Promise.all([remote(watch), local(watch)]);
      expect(json<{ state: string }>(c)).toMatchObject({ state: 'succeeded', succeeded: 2 });
      expect(json(c)).toEqual(json(d));
      // A new batch each: the same document but for ids, times and who asked.
      const inspect = ['--json', 'inspect', QUEUE, 'shop', 'blog'];
      const [e, f] = await Promise.all([remote(inspect), local(inspect)]);
      const comparable = (run: Run) => {
        const {
          batchId: _id,
          createdAt: _at,
          createdBy: _by,
          finishedAt: _end,
          results,
          ...rest
        } = json<Record<string, unknown> & { results: { result?: { observedAt?: string } }[] }>(run);
        return {
          ...rest,
          results: results.map(({ result, ...outcome }) => ({
            ...outcome,
            result: { ...result, observedAt: '<at>' },
          })),
        };
      };
      expect(comparable(e)).toEqual(comparable(f));
      expect(comparable(e)).toMatchObject({ state: 'succeeded', succeeded: 2 });
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 90_000);

  it('Ctrl-C on a remote inspect stops following (exit 130); the batch keeps running, as locally', async () => {
    // Long enough that the batch still runs after two CLI starts on a loaded machine (it is
    // cancelled at the end, which ends the calls at once).
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '20000');
    try {
      const inspectCalls = async () =>
        (await readFile(join(packageDir, 'calls.log'), 'utf8').catch(() => ''))
          .split('\n')
          .filter((line) => line.startsWith('project.inspect ')).length;
      const before = await inspectCalls();
      const inspect = startAs('admin', ['inspect', QUEUE, 'shop', 'blog']);
      // An inspection runs: the batch was created and the CLI follows it (it does so at once).
      await waitFor('an inspection to start', async () => (await inspectCalls()) > before, 20_000);
      inspect.child.kill('SIGINT');
      const stopped = await inspect.ended;
      expect(stopped.code, stopped.stderr).toBe(130);
      const batchId = /^stopped following; batch (\S+) keeps running \(\d of 2 done, 0 failed\)$/m.exec(
        stopped.stderr,
      )?.[1];
      expect(batchId, stopped.stderr).toBeDefined();
      expect(stopped.stderr).toContain(`switchyard batch show ${batchId} --watch`);
      expect(json<{ state: string }>(await remote(['--json', 'batch', 'show', batchId!])).state).toBe(
        'running',
      );
      expect((await remote(['batch', 'cancel', batchId!])).code).toBe(0);
    } finally {
      await rm(join(packageDir, 'inspect-sleep-ms'), { force: true });
    }
  }, 60_000);

  it('Ctrl-C on op wait, remote and local: exit 130 naming op wait and op cancel; --json: INTERRUPTED with the operationId', async () => {
    const id = await startTicking('interrupted', 30_000);
    try {
      const redisPort = Number(new URL(team.setup.installation.redisUrl).port);
      const localArgs = globalArgs(team.setup.installation);
      const waits = [
        { port: team.api.port, wait: startAs('admin', ['op', 'wait', id]) },
        { port: team.api.port, wait: startAs('admin', ['--json', 'op', 'wait', id]) },
        { port: redisPort, wait: startAs('local-admin', [...localArgs, 'op', 'wait', id]) },
        { port: redisPort, wait: startAs('local-admin', [...localArgs, '--json', 'op', 'wait', id]) },
      ];
      for (const { port, wait } of waits)
        await waitFor('the wait to connect', () => connectedTo(wait.child.pid!, port), 20_000);
      await sleep(1_000); // its first read answered: it waits for the end now
      for (const { wait } of waits) wait.child.kill('SIGINT');
      const [remoteHuman, remoteJson, localHuman, localJson] = await Promise.all(
        waits.map(({ wait }) => wait.ended),
      );
      for (const human of [remoteHuman!, localHuman!]) {
        expect(human.code, human.stderr).toBe(130);
        expect(human.stdout).toBe('');
        expect(human.stderr).toMatch(
          new RegExp(`^stopped waiting; operation ${id} keeps going \\(running\\)$`, 'm'),
        );
        expect(human.stderr).toContain(`switchyard op wait ${id}`);
        expect(human.stderr).toContain(`switchyard op cancel ${id}`);
      }
      expect(remoteHuman!.stderr).toBe(localHuman!.stderr);
      for (const document of [remoteJson!, localJson!]) {
        expect(document.code, document.stderr).toBe(130);
        expect(JSON.parse(document.stdout)).toEqual({
          error: {
            code: 'INTERRUPTED',
            message: expect.stringContaining(`op cancel ${id}`),
            operationId: id,
          },
        });
      }
      expect(json<{ state: string }>(await remote(['--json', 'op', 'show', id])).state).toBe('running');
    } finally {
      await remote(['op', 'cancel', id]);
    }
  }, 60_000);

  it('op cancel of a running operation prints how it ended (cancelled), remote and local, not `running`', async () => {
    const running = async (action: string) => {
      const id = await startTicking(action, 30_000);
      // Asked over HTTP: a CLI process per poll would load the machine the call runs on.
      const state = async () =>
        (
          await call<{ state: string }>(team.api, 'GET', `/api/v1/operations/${id}`, {
            token: team.tokens.admin.token,
          })
        ).json.state;
      await waitFor(`${action} to run`, async () => (await state()) === 'running', 30_000);
      return id;
    };
    const viaApiId = await running('cancel-remote');
    const viaApi = await remote(['op', 'cancel', viaApiId]);
    expect(viaApi.code, viaApi.stderr).toBe(0);
    expect(viaApi.stdout).toBe(`${viaApiId}: cancelled\n`);
    const viaRedisId = await running('cancel-local');
    const viaRedis = await local(['--json', 'op', 'cancel', viaRedisId]);
    expect(json<{ id: string; state: string }>(viaRedis)).toMatchObject({
      id: viaRedisId,
      state: 'cancelled',
    });
    // Cancelling again: the same end, at once.
    const again = await remote(['--json', 'op', 'cancel', viaRedisId]);
    expect(json(again)).toEqual(json(viaRedis));
  }, 90_000);

  it('with every event stream of its token taken (429), a remote op wait still ends, reading the operation instead', async () => {
    const id = await startTicking('crowded', 2_500);
    const held = new AbortController();
    try {
      const opened: Response[] = [];
      for (;;) {
        const response = await fetch(`${team.api.base}/api/v1/operations/${id}/events`, {
          headers: { authorization: `Bearer ${team.tokens.admin.token}` },
          signal: held.signal,
        });
        if (response.status !== 200) {
          expect(response.status, await response.text()).toBe(429);
          break;
        }
        opened.push(response);
      }
      expect(opened.length).toBeGreaterThan(0);
      const waited = await remote(['--json', 'op', 'wait', id]);
      expect(waited.code, waited.stderr).toBe(0);
      expect(json(waited)).toEqual(json(await local(['--json', 'op', 'show', id])));
      expect(json<{ state: string }>(waited).state).toBe('succeeded');
    } finally {
      held.abort();
    }
  }, 60_000);

  it('a remote op wait outlives an api restart: it connects again and prints how the operation ended', async () => {
    const id = await startTicking('restarted', 4_000);
    const wait = startAs('admin', ['--json', 'op', 'wait', id]);
    await waitFor(
      'the wait to connect to the api',
      () => connectedTo(wait.child.pid!, team.api.port),
      20_000,
    );
    await sleep(300); // its first read (GET /operations/:id) answered: it streams the events now
    // A crash (a graceful stop would let the stream end with the operation first), then the same address again.
    team.api.proc.child.kill('SIGKILL');
    await team.api.proc.exited;
    const again = spawnCli([...globalArgs(team.setup.installation), 'api', '--port', String(team.api.port)]);
    await waitFor(
      'the api to answer again',
      async () => {
        if (!again.running()) throw new Error(`the api exited:\n${again.output()}`);
        // Any answer (503 too: no scheduler runs here) means it listens.
        return (await fetch(`${team.api.base}/healthz`).catch(() => undefined)) !== undefined;
      },
      30_000,
      200,
    );
    team.api.proc = again;
    const waited = await wait.ended;
    expect(waited.code, waited.stderr).toBe(0);
    expect(json<{ state: string }>(waited)).toMatchObject({ id, state: 'succeeded' });
    expect(json(waited)).toEqual(json(await local(['--json', 'op', 'show', id])));
  }, 90_000);
});
