// `plugin set` as the host's policy for a plugin's calls (CLI.md, PROTOCOL
// §9.5): a package trusted now gets no network, and the audit says so; an
// admin sets network, extra paths and resource limits, `plugin show` lists
// them; a record trusted before network confinement keeps its network, and
// the audit says that too; bad values exit 2 naming what to fix; trusting
// again the trusted fingerprint keeps an enabled plugin as it was.
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../../src/core/redis/index.js';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  cliOn,
  expectUsageError,
  onlyJson,
  requireBuiltCli,
  reviewAndEnable,
  type Installation,
} from './support.js';

const ID = 'fixture-inspector';
type Policy = {
  network: string;
  networkReason: string;
  allowRead: string[];
  allowWrite: string[];
  limits: Record<string, number>;
};
type AuditRow = { action: string; target: string; detail: Record<string, unknown> };

let redis: OwnedRedis;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;

const policyOf = async () => onlyJson<{ policy: Policy }>(await cli(['--json', 'plugin', 'show', ID])).policy;
const auditOf = async (action: string) =>
  onlyJson<AuditRow[]>(await cli(['--json', 'audit', '--action', action])).filter(
    (row) => row.action === action && row.target === ID,
  );

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  const root = await mkdtemp(join(tmpdir(), 'switchyard-plugin-policy-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', ID), { recursive: true });
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('plugin-policy') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, ID, ['project.metadata.read']);
}, 60_000);

afterAll(async () => {
  await redis?.stop();
});

describe('plugin set: the policy of a plugin’s calls', () => {
  it('a package trusted now has no network, and the trust audit says so', async () => {
    const policy = await policyOf();
    expect(policy.network).toBe('none');
    expect(policy.networkReason).toMatch(/default for a package trusted now/);
    expect(policy.limits).toEqual({
      memoryBytes: 2 * 1024 ** 3,
      cpuMs: 30 * 60_000,
      fileSizeBytes: 1024 ** 3,
      openFiles: 1024,
      processes: 256,
      diskBytes: 256 * 1024 ** 2,
    });
    const [trust] = await auditOf('plugin.trust');
    expect(trust?.detail).toMatchObject({ network: 'none' });
  });

  it('an admin sets network, paths and limits; plugin show lists them; the audit records them', async () => {
    const set = await cli([
      '--json',
      'plugin',
      'set',
      ID,
      '--network',
      'allow',
      '--memory',
      '512MiB',
      '--cpu',
      '60s',
      '--file-size',
      '64M',
      '--open-files',
      '256',
      '--processes',
      '64',
      '--disk',
      '64MiB',
      '--allow-read',
      '/opt/shared-rules',
      '--allow-read',
      'relative/rules',
    ]);
    const detail = onlyJson<{ policy: Policy }>(set);
    expect(detail.policy).toMatchObject({
      network: 'allow',
      networkReason: 'set by an admin',
      allowWrite: [],
      limits: {
        memoryBytes: 512 * 1024 ** 2,
        cpuMs: 60_000,
        fileSizeBytes: 64 * 1024 ** 2,
        openFiles: 256,
        processes: 64,
        diskBytes: 64 * 1024 ** 2,
      },
    });
    expect(detail.policy.allowRead[0]).toBe('/opt/shared-rules');
    expect(isAbsolute(detail.policy.allowRead[1]!)).toBe(true);
    expect(detail.policy.allowRead[1]).toMatch(/\/relative\/rules$/);

    const shown = await cli(['plugin', 'show', ID]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('network: allow — set by an admin');
    // One line each, not one escaped run (`\x0a`).
    expect(shown.stdout).not.toContain('\\x0a');
    expect(shown.stdout).toMatch(/^\s+extra read paths: /m);
    expect(shown.stdout).toContain('extra read paths: /opt/shared-rules, ');
    expect(shown.stdout).toContain(
      'limits per call: memory 512MiB, cpu 1m, file size 64MiB, open files 256, processes 64, disk 64MiB',
    );
    const sets = await auditOf('plugin.set');
    expect(sets.at(-1)?.detail).toMatchObject({
      confinement: { network: 'allow', memoryBytes: 512 * 1024 ** 2, processes: 64 },
    });

    // Unset options keep their value; `none` clears a path list.
    const cleared = onlyJson<{ policy: Policy }>(
      await cli(['--json', 'plugin', 'set', ID, '--allow-read', 'none', '--network', 'none']),
    );
    expect(cleared.policy).toMatchObject({ network: 'none', allowRead: [], limits: { processes: 64 } });
  });

  it('bad values exit 2 naming what to fix, and change nothing', async () => {
    const before = await policyOf();
    expectUsageError(await cli(['plugin', 'set', ID, '--memory', '1k']), /--memory must be a size from/);
    expectUsageError(await cli(['plugin', 'set', ID, '--memory', 'lots']), /--memory must be a size from/);
    expectUsageError(await cli(['plugin', 'set', ID, '--disk', '1k']), /--disk must be a size from/);
    expectUsageError(
      await cli(['plugin', 'set', ID, '--network', 'maybe']),
      /--network must be allow or none/,
    );
    expectUsageError(
      await cli(['plugin', 'set', ID, '--processes', '0']),
      /--processes must be an integer from 1/,
    );
    expectUsageError(await cli(['plugin', 'set', ID, '--cpu', '10ms']), /--cpu must be a duration/);
    expectUsageError(await cli(['plugin', 'set', ID]), /nothing to set/);
    const unknown = await cli(['plugin', 'set', 'no-such-plugin', '--network', 'none']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no-such-plugin/);
    expect(await policyOf()).toEqual(before);
  });

  it('trusting again the fingerprint it is trusted at changes nothing: still enabled, grants and policy kept', async () => {
    const before = onlyJson<{
      fingerprint: string;
      enabled: boolean;
      grantedScopes: string[];
      policy: Policy;
    }>(await cli(['--json', 'plugin', 'show', ID]));
    expect(before.enabled).toBe(true);
    const trusts = (await auditOf('plugin.trust')).length;
    const again = await cli(['plugin', 'trust', ID, '--fingerprint', before.fingerprint, '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /was already trusted at [0-9a-f]{64}; nothing changed: it stays enabled with project\.metadata\.read/,
    );
    const after = onlyJson<typeof before>(await cli(['--json', 'plugin', 'show', ID]));
    expect({ enabled: after.enabled, grantedScopes: after.grantedScopes, policy: after.policy }).toEqual({
      enabled: true,
      grantedScopes: before.grantedScopes,
      policy: before.policy,
    });
    const confirmations = await auditOf('plugin.trust');
    expect(confirmations).toHaveLength(trusts + 1);
    expect(confirmations[0]?.detail).toMatchObject({ fingerprint: before.fingerprint, unchanged: true });
  });

  it('a record trusted before network confinement keeps its network on refresh, and the audit says so', async () => {
    // As an earlier version stored it: trusted, with no network decision.
    const client = new Redis(installation.redisUrl!);
    try {
      const key = keysFor(installation.prefix!).plugins;
      const record = JSON.parse((await client.hget(key, ID)) ?? 'null');
      expect(record, `a stored record of ${ID} in ${key}`).not.toBeNull();
      delete record.confinement;
      await client.hset(key, ID, JSON.stringify(record));
    } finally {
      client.disconnect();
    }
    expect((await cli(['plugin', 'refresh'])).code).toBe(0);
    const policy = await policyOf();
    expect(policy.network).toBe('allow');
    expect(policy.networkReason).toMatch(/trusted before network confinement/);
    expect(await auditOf('plugin.network-kept')).toHaveLength(1);
    // Said once: a second refresh does not repeat it.
    expect((await cli(['plugin', 'refresh'])).code).toBe(0);
    expect(await auditOf('plugin.network-kept')).toHaveLength(1);
  });
});
