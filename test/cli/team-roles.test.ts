// Team mode with three identities, remotely (test/support/team.ts): the admin
// does the README journey, the viewer reads and is refused a trust (exit 4,
// naming admin), the operator inspects, runs and cancels and is refused an
// enable, and the audit names each token. Then the remote and local outputs
// of the same commands are compared: the same documents, text and exit codes.
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, PLUGIN_ID } from '../api/support.js';
import { RELATIVE_TIME, json, useTeam, type Run } from '../support/team.js';

const team = useTeam('cli-team-roles');
const { as, local, remote } = team;

beforeAll(() => team.logIn('viewer', 'operator', 'admin'), 90_000);

describe('three identities, remotely', () => {
  let fingerprint = '';

  it('admin: the README journey (refresh, show, trust, enable, scan, inspect, run, schedule, token)', async () => {
    expect((await as('admin', ['plugin', 'refresh'])).code).toBe(0);
    fingerprint = json<{ fingerprint: string }>(
      await as('admin', ['--json', 'plugin', 'show', PLUGIN_ID]),
    ).fingerprint;
    const trust = await as('admin', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint, '--yes']);
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout).toMatch(/trusted fixture-inspector/);
    const enable = await as('admin', [
      'plugin',
      'enable',
      PLUGIN_ID,
      ...ALL_SCOPES.flatMap((scope) => ['--scope', scope]),
      '--yes',
    ]);
    expect(enable.code, enable.stderr).toBe(0);
    const scanned = json<{ registered: { id: string }[]; refused: unknown[] }>(
      await as('admin', ['--json', 'project', 'scan', team.projectsDir, '--trust']),
    );
    expect(scanned.registered.map((project) => project.id).sort()).toEqual(['blog', 'shop']);
    expect(scanned.refused).toEqual([]);
    const batch = json<{ total: number; succeeded: number; results: unknown[] }>(
      await as('admin', ['--json', 'inspect', PLUGIN_ID, '--all']),
    );
    expect(batch).toMatchObject({ total: 2, succeeded: 2 });
    const run = json<{ state: string; result: { output: unknown } }>(
      await as('admin', [
        '--json',
        'run',
        PLUGIN_ID,
        'shop',
        'fixture.echo',
        '--input',
        '{"hello":"team"}',
        '--yes',
        '--wait',
      ]),
    );
    expect(run).toMatchObject({ state: 'succeeded', result: { output: { hello: 'team' } } });
    const schedule = await as('admin', ['schedule', 'add', PLUGIN_ID, '--all', '--cron', '0 3 * * *']);
    expect(schedule.code, schedule.stderr).toBe(0);
    expect(schedule.stdout).toMatch(/schedule sched_\w+ added/);
    const created = json<{ token: string; expiresAt: string }>(
      await as('admin', [
        '--json',
        'token',
        'create',
        '--name',
        'newcomer',
        '--role',
        'viewer',
        '--expires-in',
        '30d',
      ]),
    );
    expect(created.token).toMatch(/^sy_/);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const list = await as('admin', ['token', 'list']);
    expect(list.stdout).toMatch(/EXPIRES\s+LAST USED/);
    expect(list.stdout).toMatch(/newcomer\s+viewer.*in 30d\s+never/);
    expect(list.stdout).toMatch(/admin-person\s+admin.*never\s+(just now|\d+(ms|s) ago)/);
  }, 120_000);

  it('viewer: lists plugins, projects, batches and audit; plugin trust exits 4 naming admin', async () => {
    for (const args of [['plugin', 'list'], ['project', 'list'], ['batch', 'list'], ['audit']]) {
      const run = await as('viewer', args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    expect((await as('viewer', ['project', 'list'])).stdout).toMatch(/shop/);
    const refused = await as('viewer', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint, '--yes']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/needs the admin role; token viewer-person has viewer/);
    // Refused by role, not shown the trust prompt first.
    expect(refused.stderr).not.toMatch(/operating-system identity/);
    const refusedJson = await as('viewer', [
      '--json',
      'plugin',
      'trust',
      PLUGIN_ID,
      '--fingerprint',
      fingerprint,
      '--yes',
    ]);
    expect(refusedJson.code).toBe(4);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringMatching(/admin/) },
    });
  });

  it('viewer: trust, enable and run without --yes are refused by role (exit 4) before any --yes prompt', async () => {
    const trust = await as('viewer', ['plugin', 'trust', PLUGIN_ID, '--fingerprint', fingerprint]);
    expect(trust.code, trust.stderr).toBe(4);
    expect(trust.stderr).toMatch(/plugin trust needs the admin role; token viewer-person has viewer/);
    expect(trust.stderr).not.toMatch(/--yes|what code may run/);
    const enable = await as('viewer', ['plugin', 'enable', PLUGIN_ID, '--scope', 'project.metadata.read']);
    expect(enable.code, enable.stderr).toBe(4);
    expect(enable.stderr).toMatch(/plugin enable needs the admin role/);
    const run = await as('viewer', ['run', PLUGIN_ID, 'shop', 'fixture.echo']);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/run needs the operator role; token viewer-person has viewer/);
    expect(run.stderr).not.toMatch(/--yes/);
    // An operator is asked to confirm, told what the run does (not "what code may run").
    const unconfirmed = await as('operator', ['run', PLUGIN_ID, 'shop', 'fixture.echo']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(
      /runs the action fixture\.echo of \S+ on project shop, which may change it/,
    );
    expect(unconfirmed.stderr).not.toMatch(/what code may run/);
  });

  it('operator: an inspection batch, an operation, a cancel; plugin enable exits 4', async () => {
    const batch = json<{ succeeded: number }>(await as('operator', ['--json', 'inspect', PLUGIN_ID, 'shop']));
    expect(batch.succeeded).toBe(1);
    const run = await as('operator', [
      'run',
      PLUGIN_ID,
      'blog',
      'fixture.echo',
      '--input',
      '{"n":1}',
      '--yes',
      '--wait',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/state\s+succeeded/);
    const queued = json<{ id: string }>(
      await as('operator', [
        '--json',
        'run',
        PLUGIN_ID,
        'shop',
        'fixture.echo',
        '--yes',
        '--idempotency-key',
        'op-cancel-1',
      ]),
    );
    const cancelled = await as('operator', ['op', 'cancel', queued.id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^${queued.id}: (cancelled|succeeded)`));
    const refused = await as('operator', [
      'plugin',
      'enable',
      PLUGIN_ID,
      '--scope',
      'project.metadata.read',
      '--yes',
    ]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/needs the admin role/);
  }, 60_000);

  it('the audit names each token as the actor', async () => {
    const entries = json<{ actor: string; action: string }[]>(
      await as('viewer', ['--json', 'audit', '--limit', '200']),
    );
    const actorOf = (action: string) =>
      new Set(entries.filter((entry) => entry.action === action).map((entry) => entry.actor));
    expect(actorOf('plugin.trust')).toEqual(new Set(['token:admin-person']));
    expect(actorOf('schedule.add')).toEqual(new Set(['token:admin-person']));
    expect(actorOf('token.create')).toContain('token:admin-person');
    expect(actorOf('batch.create')).toEqual(new Set(['token:admin-person', 'token:operator-person']));
    expect(actorOf('operation.cancel')).toEqual(new Set(['token:operator-person']));
    expect(entries.some((entry) => entry.actor.startsWith('user:'))).toBe(false);
  });
});

describe('remote and local print the same', () => {
  it('the same JSON documents, human output and exit codes', async () => {
    const batchId = json<{ batchId: string }[]>(await remote(['--json', 'batch', 'list']))[0]!.batchId;
    const opId = json<{ id: string }[]>(await remote(['--json', 'op', 'list']))[0]!.id;
    for (const args of [
      ['--json', 'plugin', 'list'],
      ['--json', 'plugin', 'show', PLUGIN_ID],
      ['--json', 'plugin', 'logs', PLUGIN_ID],
      ['--json', 'project', 'list'],
      ['--json', 'batch', 'list'],
      ['--json', 'batch', 'show', batchId],
      ['--json', 'op', 'list'],
      ['--json', 'op', 'show', opId],
      ['--json', 'schedule', 'list'],
      ['schedule', 'list'],
      ['plugin', 'list'],
      ['plugin', 'show', PLUGIN_ID],
      ['project', 'list'],
      ['--json', 'plugin', 'show', 'no-such-plugin'],
      ['plugin', 'show', 'no-such-plugin'],
      ['--json', 'op', 'show', 'op_nope'],
      ['--json', 'inspect', PLUGIN_ID],
      ['--json', 'batch', 'list', '--limit', '5000'], // the api's bound holds in both modes
      // Batch control's filters and commands (the new routes, remotely).
      ['--json', 'batch', 'list', '--state', 'succeeded', '--plugin', PLUGIN_ID, '--limit', '2'],
      ['batch', 'list', '--state', 'failed'],
      ['--json', 'op', 'list', '--plugin', PLUGIN_ID, '--state', 'succeeded'],
      ['--json', 'audit', '--action', 'plugin.', '--since', '1h', '--limit', '5'],
      ['audit', '--actor', 'token:admin-person', '--target', PLUGIN_ID],
      ['--json', 'batch', 'diff', batchId, batchId],
      ['batch', 'diff', batchId, batchId, '--exit-code'],
      ['batch', 'show', batchId, '--watch'],
      ['batch', 'cancel', batchId], // a finished batch: idempotent, nothing changes
    ]) {
      const [a, b] = [await remote(args), await local(args)];
      // Relative times ("32s ago") may tick between the two runs; everything else is the same text.
      // plugin show names the process whose containment it reports (the api, or this CLI).
      const same = (run: Run) => ({
        code: run.code,
        // (and a label holding that name pads its column differently: compare words, not padding).
        stdout: run.stdout
          .replace(RELATIVE_TIME, '<ago>')
          .replace(/\b(api|cli):[^\s:"]+:\d+/g, '<process>')
          // Each worker's confinement report carries when it was last refreshed.
          .replace(/"at": "[^"]+"/g, '"at": "<when>"')
          .replace(/ +/g, ' '),
      });
      expect(same(a), args.join(' ')).toEqual(same(b));
      expect(a.stderr.replace(/^warning.*\n/, ''), args.join(' ')).toBe(b.stderr);
    }
    // Writes: the same documents, ids, actors and names aside (a derived name is numbered when taken).
    const strip = ({ id: _id, name, createdAt: _at, createdBy: _by, ...rest }: Record<string, unknown>) => ({
      ...rest,
      name: String(name).replace(/-\d+$/, ''),
    });
    const add = ['--json', 'schedule', 'add', PLUGIN_ID, 'shop', '--every', '1h'];
    expect(strip(json(await remote(add)))).toEqual(strip(json(await local(add))));
    const disable = ['--json', 'plugin', 'disable', PLUGIN_ID];
    expect(json(await remote(disable))).toEqual(json(await local(disable)));
    const limits = ['--json', 'plugin', 'set', PLUGIN_ID, '--operate-timeout', '2h'];
    expect(json<{ timeLimits: unknown }>(await remote(limits)).timeLimits).toEqual(
      json<{ timeLimits: unknown }>(await local(limits)).timeLimits,
    );
    const opLogs = ['--json', 'op', 'logs', opId];
    expect(json(await remote(opLogs))).toEqual(json(await local(opLogs)));
    // A finished operation: the follow prints its stderr and ends at once, as `op wait` does.
    for (const args of [
      ['op', 'logs', opId, '--follow'],
      ['--json', 'op', 'wait', opId],
    ]) {
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, `${args.join(' ')}: ${a.stderr}`).toBe(b.code);
      expect(a.stdout.replace(RELATIVE_TIME, '<ago>'), args.join(' ')).toBe(
        b.stdout.replace(RELATIVE_TIME, '<ago>'),
      );
    }
    // An unknown id: the same refusal (exit 2, the same message) from a follow, a wait and an export.
    for (const args of [
      ['op', 'logs', 'op_nope', '--follow'],
      ['--json', 'op', 'wait', 'op_nope'],
      ['plugin', 'logs', 'no-such-plugin', '--follow'],
      ['plugin', 'logs', PLUGIN_ID, '--follow', '--operation', 'op_nope'],
      ['batch', 'show', 'batch_nope', '--watch'],
      ['--json', 'batch', 'export', 'batch_nope', '--format', 'csv'],
    ]) {
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, `${args.join(' ')}: ${a.stderr}`).toBe(2);
      expect([a.code, a.stdout, a.stderr], args.join(' ')).toEqual([b.code, b.stdout, b.stderr]);
      expect(a.stderr, args.join(' ')).toMatch(/unknown/);
    }
    // An export streams the api's body: byte for byte what local mode prints.
    for (const format of ['jsonl', 'csv']) {
      const args = ['batch', 'export', batchId, '--format', format];
      const [a, b] = await Promise.all([remote(args), local(args)]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      expect(a.stdout, format).toBe(b.stdout);
      expect(a.stdout, format).toContain(batchId);
    }
    const badCron = ['--json', 'schedule', 'add', PLUGIN_ID, '--all', '--cron', 'not a cron'];
    const [a, b] = [await remote(badCron), await local(badCron)];
    expect([a.code, a.stdout]).toEqual([b.code, b.stdout]);
    expect(a.code).toBe(2);
  }, 300_000);
});
