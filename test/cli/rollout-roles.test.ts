// Rollouts through the remote CLI and the api, with a worker (test/support/team.ts):
// who may create, approve, pause and resume (docs/CLI.md "Rollouts"), the
// two-person approval by a second admin token, a preview action of risk other
// than none refused, ids by prefix and latest,
// `show --watch` exiting 0 on success, `--json` shapes with projects.
import { beforeAll, describe, expect, it } from 'vitest';
import { PLUGIN_ID, trustEnableAndScan } from '../api/support.js';
import { json, useTeam } from '../support/team.js';

const team = useTeam('cli-rollout-roles');
const { as } = team;

interface Rollout {
  id: string;
  state: string;
  risk: string;
  total: number;
  createdBy: string;
  approvedBy?: string;
  counts: Record<string, number>;
  projects?: { projectId: string; state: string; operationId?: string }[];
}

beforeAll(async () => {
  await trustEnableAndScan(team.setup);
  await team.logIn('viewer', 'operator', 'admin');
}, 90_000);

/** The api's own admin token: the second admin of this installation. */
const secondAdmin = (args: string[]) =>
  as('second-admin', args, {
    env: { SWITCHYARD_URL: team.api.base, SWITCHYARD_TOKEN: team.api.adminToken },
  });

describe('rollouts remotely', () => {
  it('a viewer may not create one; an operator creates it, only another admin approves it', async () => {
    const refused = await as('viewer', ['rollout', 'create', PLUGIN_ID, 'fixture.echo', '--all', '--yes']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/rollout create needs the operator role/);

    // A preview action must be of risk none: fixture.echo is not advertised yet (risk unknown).
    const risky = await as('operator', [
      'rollout',
      'create',
      PLUGIN_ID,
      'fixture.echo',
      '--all',
      '--preview-action',
      'fixture.dry-run',
      '--yes',
    ]);
    expect(risky.code).toBe(2);
    expect(risky.stderr).toMatch(
      /--preview-action fixture\.dry-run must be an action of risk none.*risk unknown/,
    );

    const unconfirmed = await as('operator', ['rollout', 'create', PLUGIN_ID, 'fixture.echo', '--all']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/--yes/);

    // Nothing inspected yet: the action's risk is unknown, so it waits for approval.
    const created = json<Rollout>(
      await as('operator', [
        '--json',
        'rollout',
        'create',
        PLUGIN_ID,
        'fixture.echo',
        'shop',
        'blog',
        '--input',
        '{"hello":"fleet"}',
        '--waves',
        '1,100%',
        '--yes',
      ]),
    );
    expect(created).toMatchObject({ state: 'awaiting-approval', risk: 'unknown', total: 2 });
    expect(created.createdBy).toBe('token:operator-person');

    const byOperator = await as('operator', ['rollout', 'approve', created.id, '--yes']);
    expect(byOperator.code).toBe(4);
    const prefix = created.id.slice('rollout_'.length, 'rollout_'.length + 8);
    const listed = json<Rollout[]>(
      await as('viewer', ['--json', 'rollout', 'list', '--state', 'awaiting-approval']),
    );
    expect(listed.map((rollout) => rollout.id)).toEqual([created.id]);

    const approved = json<Rollout>(await secondAdmin(['--json', 'rollout', 'approve', prefix, '--yes']));
    expect(approved.approvedBy).toBe('token:initial-admin');
    const watched = await as('viewer', ['--json', 'rollout', 'show', 'latest', '--watch']);
    expect(watched.code, watched.stderr).toBe(0);
    const shown = JSON.parse(watched.stdout) as Rollout;
    expect(shown).toMatchObject({ state: 'succeeded', counts: { succeeded: 2, pending: 0, running: 0 } });
    expect(shown.projects?.map((project) => [project.projectId, project.state])).toEqual([
      ['blog', 'succeeded'],
      ['shop', 'succeeded'],
    ]);
    const operation = json<{ requestedBy: string; input: unknown }>(
      await as('viewer', ['--json', 'op', 'show', shown.projects![0]!.operationId!]),
    );
    expect(operation).toMatchObject({ requestedBy: 'token:operator-person', input: { hello: 'fleet' } });
  }, 120_000);

  it('the creating admin may not approve their own rollout; an operator pauses, the admin cancels', async () => {
    // Without --json, stdout is the id alone (ID=$(switchyard rollout create …)); what it means goes to stderr.
    const made = await as('admin', ['rollout', 'create', PLUGIN_ID, 'fixture.echo', '--all', '--yes']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^rollout_[0-9a-f-]+\n$/);
    expect(made.stderr).toMatch(/2 projects in \d waves; awaiting-approval/);
    const created = { id: made.stdout.trim() };
    const own = await as('admin', ['rollout', 'approve', created.id, '--yes']);
    expect(own.code).toBe(4);
    expect(own.stderr).toMatch(/another admin must approve it/);
    const paused = await as('operator', ['rollout', 'pause', created.id]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/paused: paused by token:operator-person/);
    const cancelled = json<Rollout>(await as('admin', ['--json', 'rollout', 'cancel', created.id]));
    expect(cancelled).toMatchObject({ state: 'cancelled', counts: { cancelled: 2, pending: 0 } });
    const watched = await as('viewer', ['rollout', 'show', created.id, '--watch']);
    expect(watched.code).toBe(1);
    const unknown = await as('viewer', ['rollout', 'show', 'rollout_nothing']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown rollout/);
  }, 120_000);
});
