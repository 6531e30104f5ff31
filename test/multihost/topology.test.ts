// Across machines (docs/ARCHITECTURE.md "Beyond one machine"), on hosts made of
// Linux network namespaces (netns.ts): `redis` runs redis-server with TLS
// only and an ACL user; `w1` and `w2` run one worker each, each with its own
// data directory and its own copy of the plugin package; `api` runs the api
// and the scheduler. Every process is `node dist/cli/main.js …` reaching
// Redis at rediss://switchyard:…@10.77.0.2:6380 and trusting the test's CA.
// The test process itself reaches the hosts only through processes it starts
// on them (the CLI, and an HTTP client on the api host).
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchView } from '../../src/core/work/batches/batch-store.js';
import { requireBuiltCli } from '../support/cli-process.js';
import { runTable } from '../support/run-table.js';
import { sleep, waitFor } from '../support/wait.js';
import { isAlive, killAll } from '../support/processes.js';
import { QUEUE_PLUGIN, readLines } from '../support/workers.js';
import { createTopology, missingPrerequisite, removeLeftovers, type Topology } from './netns.js';
import {
  REDIS_TLS_PORT,
  REDIS_USER,
  cliOn,
  httpClientOn,
  makeCertificates,
  startSwitchyard,
  startTlsRedis,
  type HostProcess,
  type HttpAnswer,
  type Switchyard,
} from './services.js';

const PLUGIN = 'queue-plugin';
const SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
const BATCH = 2_000;
const HOSTS = { redis: 2, api: 4, w1: 11, w2: 12 } as const;
const WORKERS = ['w1', 'w2'] as const;

const unavailable = await missingPrerequisite();
if (unavailable) console.warn(`multi-host suite skipped: it ${unavailable}`);

let topology: Topology | undefined;
let dir = '';
let target: Switchyard;
const processes: HostProcess[] = [];
let api: HostProcess;
let http: ReturnType<typeof httpClientOn>;
const hostData = (host: string) => join(dir, 'hosts', host, 'data');
const packageOn = (host: string) => join(hostData(host), 'plugins', PLUGIN);
let overlapMs: number | undefined;
let warmUpBatches = 0;
const tally = { partitions: 0, apiRestarts: 0, lostProjects: 0, lostOperations: 0, duplicates: 0 };
const started = performance.now();

async function installPackage(host: string): Promise<void> {
  const packageDir = packageOn(host);
  await mkdir(packageDir, { recursive: true });
  await copyFile(QUEUE_PLUGIN, join(packageDir, 'queue-plugin.mjs'));
  await chmod(join(packageDir, 'queue-plugin.mjs'), 0o755);
  const manifest = {
    schemaVersion: 'switchyard.plugin-manifest/v1',
    id: PLUGIN,
    name: 'Queue fault plugin',
    version: '1.0.0',
    protocolVersion: 'switchyard.plugin/v1',
    executable: 'queue-plugin.mjs',
    arguments: [],
    capabilities: ['project.inspect', 'project.operate'],
    requestedScopes: SCOPES,
  };
  await writeFile(join(packageDir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

const apiArgs = ['api', '--host', `10.77.0.${HOSTS.api}`, '--port', '7317', '--insecure-http'];

function launch(host: keyof typeof HOSTS, args: string[]): HostProcess {
  const proc = startSwitchyard(topology!.hosts[host]!, hostData(host), target, args);
  processes.push(proc);
  return proc;
}

/** Inspection calls each worker host's plugin made (its own calls.log), optionally only after `since`. */
async function callsOn(host: string, since = 0): Promise<string[]> {
  return (await readLines(join(packageOn(host), 'calls.log'))).filter((line) => {
    const [method, , , , at] = line.split(' ');
    return method === 'project.inspect' && Number(at) > since;
  });
}

async function ok<T>(answer: Promise<HttpAnswer | { error: string }>, what: string): Promise<T> {
  const result = await answer;
  if ('error' in result || result.status >= 300) throw new Error(`${what}: ${JSON.stringify(result)}`);
  return result.body as T;
}

/** Follows a batch over the HTTP API to its end, riding out api restarts; counts unreachable polls. */
async function followBatch(batchId: string, timeoutMs: number, onPoll?: (view: BatchView) => Promise<void>) {
  let unreachable = 0;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await http.request('GET', '/batches?limit=20');
    if ('error' in answer || answer.status >= 500) unreachable += 1;
    else {
      const view = (answer.body as { items: BatchView[] }).items.find((batch) => batch.batchId === batchId);
      if (view && onPoll) await onPoll(view);
      if (view && view.state !== 'running') {
        const full = await ok<BatchView>(http.request('GET', `/batches/${batchId}`), 'batch');
        return { view: full, unreachable };
      }
    }
    if (Date.now() > deadline) throw new Error(`batch ${batchId} did not finish within ${timeoutMs} ms`);
    await sleep(500);
  }
}

function exactlyOnce(view: BatchView, ids: string[]): void {
  const resultIds = view.results!.map((result) => result.projectId);
  tally.lostProjects += ids.length - new Set(resultIds).size;
  expect(view.total).toBe(ids.length);
  expect(view.failed).toBe(0);
  expect(resultIds).toHaveLength(ids.length);
  expect([...resultIds].sort()).toEqual([...ids].sort());
}

describe.skipIf(unavailable !== undefined)('multi-host topology (network namespaces)', () => {
  const ids = Array.from({ length: BATCH }, (_, index) => `p${String(index).padStart(4, '0')}`);

  beforeAll(async () => {
    requireBuiltCli();
    const leftovers = await removeLeftovers();
    if (leftovers.length > 0) console.warn(`removed leftovers of a crashed run: ${leftovers.join(', ')}`);
    dir = await mkdtemp('/tmp/sy15-');
    topology = await createTopology(HOSTS);
    const certs = await makeCertificates(dir, `10.77.0.${HOSTS.redis}`);
    const password = randomBytes(12).toString('hex');
    await mkdir(join(dir, 'redis'));
    processes.push(await startTlsRedis(topology.hosts.redis!, join(dir, 'redis'), certs, password));
    await mkdir(join(dir, 'data')); // every host's data dir, mounted here for it alone
    for (const host of ['api', ...WORKERS]) await installPackage(host);
    target = {
      dataDir: join(dir, 'data'),
      redisUrl: `rediss://${REDIS_USER}:${password}@10.77.0.${HOSTS.redis}:${REDIS_TLS_PORT}`,
      prefix: 'sy15',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.ca, NO_COLOR: '1' },
    };
    await Promise.all(
      [...ids, 'op-0', 'op-1', 'op-2'].map((id) => mkdir(join(dir, 'projects', id), { recursive: true })),
    );
    // Review, trust and enable on the api host, as an administrator would.
    const apiHost = topology.hosts.api!;
    const cli = (args: string[]) => cliOn(apiHost, hostData('api'), target, args);
    await cli(['plugin', 'refresh']);
    const shown = JSON.parse(await cli(['--json', 'plugin', 'show', PLUGIN])) as { fingerprint: string };
    await cli(['plugin', 'trust', PLUGIN, '--fingerprint', shown.fingerprint, '--yes']);
    // The fixture keeps its bookkeeping in its package directory (one per host) and finds its worker in /proc.
    // By the path every host sees (its own data dir is mounted there): a write path is writable at the
    // path given, in the call's read-only mount namespace, not through another mount of the directory.
    const writable = ['--allow-write', join(target.dataDir, 'plugins', PLUGIN)];
    await cli(['plugin', 'set', PLUGIN, ...writable, '--allow-read', '/proc']);
    await cli(['plugin', 'enable', PLUGIN, ...SCOPES.flatMap((scope) => ['--scope', scope]), '--yes']);
    await cli(['project', 'scan', join(dir, 'projects'), '--trust']);

    api = launch('api', apiArgs);
    const scheduler = launch('api', ['scheduler']);
    const workers = WORKERS.map((host) =>
      launch(host, ['worker', '--concurrency', '3', '--lock-duration', '3000']),
    );
    await Promise.all([
      api.until('"event":"listening"'),
      scheduler.until('"event":"scheduler-synced"'),
      ...workers.map((worker) => worker.until('"event":"worker-ready"')),
    ]);
    const token = (await readFile(join(hostData('api'), 'api-token'), 'utf8')).trim();
    http = httpClientOn(apiHost, `http://10.77.0.${HOSTS.api}:7317/api/v1`, token);
  }, 180_000);

  afterAll(async () => {
    http?.close();
    await Promise.all(processes.map((proc) => proc.kill9()));
    await topology?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('nothing of the topology is in the test namespace: no interface, address or listener on 10.77.0.0/24', async () => {
    const { execFileSync } = await import('node:child_process');
    expect(execFileSync('ip', ['-o', 'addr'], { encoding: 'utf8' })).not.toMatch(/10\.77\.0\./);
    expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).not.toMatch(/sy15|\bbr0\b/);
  });

  it('a 2,000-project batch is served by both worker hosts; w1 partitioned mid-batch; every project exactly once; w1 rejoins', async () => {
    const batch = await ok<BatchView>(
      http.request('POST', '/batches', { pluginId: PLUGIN, projects: ids }),
      'create batch',
    );
    let partitionedAt = 0;
    let healedAt = 0;
    let recordedAtCut = 0;
    let recordedAtHeal = 0;
    const { view } = await followBatch(batch.batchId, 600_000, async (progress) => {
      const recorded = progress.succeeded + progress.failed;
      if (!partitionedAt && (await callsOn('w1')).length >= 150 && (await callsOn('w2')).length >= 150) {
        await topology!.setLink('w1', 'down');
        partitionedAt = Date.now();
        recordedAtCut = recorded;
        tally.partitions += 1;
      } else if (partitionedAt && !healedAt && Date.now() - partitionedAt > 10_000) {
        recordedAtHeal = recorded;
        await topology!.setLink('w1', 'up');
        healedAt = Date.now();
      }
    });
    if (partitionedAt && !healedAt) {
      await topology!.setLink('w1', 'up');
      healedAt = Date.now();
    }
    exactlyOnce(view, ids);
    expect(partitionedAt, 'the partition happened mid-batch').toBeGreaterThan(0);
    // While w1 was cut off, w2 alone went on: the batch progressed.
    expect(recordedAtHeal || BATCH).toBeGreaterThan(recordedAtCut);
    const share = await Promise.all(WORKERS.map(async (host) => (await callsOn(host)).length));
    console.log(
      `2,000-project batch: w1 served ${share[0]}, w2 served ${share[1]} inspections ` +
        `(w1 cut at ${recordedAtCut}/${BATCH} recorded for ${((healedAt - partitionedAt) / 1000).toFixed(1)} s; ` +
        `${recordedAtHeal}/${BATCH} recorded when it came back)`,
    );
    for (const count of share) expect(count).toBeGreaterThan(100);

    // w1 rejoins: it takes part in the next batch.
    const rejoin = await ok<BatchView>(
      http.request('POST', '/batches', { pluginId: PLUGIN, projects: ids.slice(0, 200) }),
      'rejoin batch',
    );
    const since = Date.now();
    const after = await followBatch(rejoin.batchId, 120_000);
    exactlyOnce(after.view, ids.slice(0, 200));
    expect((await callsOn('w1', since)).length, 'w1 took jobs again after the partition').toBeGreaterThan(0);
  }, 900_000);

  it('an operation dispatched by a worker host that is cut off ends OUTCOME_UNKNOWN, and its plugin is gone', async () => {
    const root = join(dir, 'projects', 'op-1');
    const operation = await ok<{ id: string }>(
      http.request('POST', '/operations', {
        pluginId: PLUGIN,
        projectId: 'op-1',
        action: 'append',
        input: { append: 'cut', writePid: true, spawnChild: true, sleepMs: 120_000 },
      }),
      'create operation',
    );
    await waitFor('the plugin to act', async () => (await readLines(join(root, 'operations.log'))).length);
    const pid = Number((await readFile(join(root, 'plugin.pid'), 'utf8')).trim());
    const grandchild = Number((await readFile(join(root, 'grandchild.pid'), 'utf8')).trim());
    // Each host has its own package dir: the pid file tells which host runs the call.
    const holder = (
      await Promise.all(
        WORKERS.map(async (host) =>
          (await readdir(packageOn(host))).includes(`plugin-${pid}.pid`) ? host : '',
        ),
      )
    ).find(Boolean)!;
    await topology!.setLink(holder, 'down');
    tally.partitions += 1;
    const cutAt = Date.now();
    // When the cut-off host's plugin and its grandchild die (the host's worker kills them once it
    // cannot renew its locks), measured from the cut.
    const gone = waitFor(
      `${holder}'s plugin and its grandchild to be killed`,
      async () => ((await isAlive(pid)) || (await isAlive(grandchild)) ? undefined : Date.now() - cutAt),
      60_000,
      100,
    ).catch(() => -1);
    try {
      const final = await waitFor(
        'the operation to end',
        async () => {
          const view = await ok<{ state: string; errorCode?: string }>(
            http.request('GET', `/operations/${operation.id}`),
            'operation',
          );
          return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view : undefined;
        },
        60_000,
        300,
      );
      const endedMs = Date.now() - cutAt;
      const goneMs = await gone;
      console.log(
        `partition of ${holder} with its operation dispatched: ${final.state} ${final.errorCode ?? ''} ` +
          `${(endedMs / 1000).toFixed(1)} s after the cut; its plugin and grandchild killed ` +
          `${goneMs < 0 ? 'never (still running after 60 s)' : `${(goneMs / 1000).toFixed(1)} s after the cut`}`,
      );
      expect(final).toMatchObject({ state: 'failed', errorCode: 'OUTCOME_UNKNOWN' });
      expect(goneMs, 'the plugin on the cut-off host was killed').toBeGreaterThanOrEqual(0);
      overlapMs = goneMs - endedMs;
    } finally {
      await topology!.setLink(holder, 'up');
      killAll([pid, grandchild]);
    }
    expect(await readLines(join(root, 'operations.log'))).toHaveLength(1);
  }, 120_000);

  // docs/ARCHITECTURE.md "No overlap after a worker dies": once the operation ends OUTCOME_UNKNOWN and its
  // project lock is free, nothing of the old call may still act. The cut-off worker kills its calls
  // itself once it cannot renew its job or project lock (its own clock, no Redis needed), before the
  // other host can declare the outcome unknown.
  it('no overlap: the cut-off host killed its plugin before the operation was declared OUTCOME_UNKNOWN', () => {
    expect(overlapMs, 'the partition test ran').toBeDefined();
    expect(overlapMs!).toBeLessThanOrEqual(500);
  });

  it('the api restarted (kill -9) during a batch loses nothing; the HTTP API follows the batch to its end', async () => {
    const subset = ids.slice(0, 600);
    const batch = await ok<BatchView>(
      http.request('POST', '/batches', { pluginId: PLUGIN, projects: subset }),
      'create batch',
    );
    const operation = await ok<{ id: string }>(
      http.request('POST', '/operations', {
        pluginId: PLUGIN,
        projectId: 'op-0',
        action: 'append',
        input: { append: 'once' },
      }),
      'create operation',
    );
    let restarted: Promise<void> | undefined;
    const { view, unreachable } = await followBatch(batch.batchId, 300_000, async (progress) => {
      if (restarted || progress.succeeded + progress.failed < 100) return;
      await api.kill9();
      // Started again without waiting: the follower keeps polling while the api is down.
      api = launch('api', apiArgs);
      restarted = api.until('"event":"listening"');
      tally.apiRestarts += 1;
    });
    await restarted;
    exactlyOnce(view, subset);
    expect(tally.apiRestarts).toBe(1);
    expect(unreachable, 'the follower saw the api down, and went on').toBeGreaterThan(0);
    const final = await waitFor(
      'the operation to end',
      async () => {
        const answer = await ok<{ state: string }>(
          http.request('GET', `/operations/${operation.id}`),
          'operation',
        );
        return ['succeeded', 'failed', 'cancelled'].includes(answer.state) ? answer : undefined;
      },
      60_000,
      300,
    );
    const entries = await readLines(join(dir, 'projects', 'op-0', 'operations.log'));
    if (entries.length > 1) tally.duplicates += 1;
    if (final.state !== 'succeeded') tally.lostOperations += 1;
    console.log(
      `api restart: ${unreachable} poll(s) found the api down; batch ${view.succeeded}/${view.total}; operation ${final.state}`,
    );
    expect(final.state).toBe('succeeded');
    expect(entries).toHaveLength(1);
  }, 400_000);

  it("a package changed on w2's disk only: disabled everywhere, the audit names w2 and both fingerprints; the changed bytes never ran", async () => {
    // The test needs w2 to take part in the batch after the change. Nothing makes a worker take any
    // share of a short batch (w1 alone can run 200 inspections in a second or two), and w2 may have
    // been the cut-off host of the partition test: first see w2 take jobs again, with the original bytes.
    const rejoinStarted = Date.now();
    const warmUps = await waitFor(
      'w2 to take jobs again',
      async () => {
        const since = Date.now();
        const warmUp = await ok<BatchView>(
          http.request('POST', '/batches', { pluginId: PLUGIN, projects: ids.slice(0, 64) }),
          'warm-up batch',
        );
        exactlyOnce((await followBatch(warmUp.batchId, 60_000)).view, ids.slice(0, 64));
        warmUpBatches += 1;
        return (await callsOn('w2', since)).length > 0 ? warmUpBatches : 0;
      },
      60_000,
      0,
    );
    console.log(
      `w2 took jobs in warm-up batch ${warmUps}, ${((Date.now() - rejoinStarted) / 1000).toFixed(1)} s after the check began`,
    );

    const marker = join(dir, 'changed-bytes-ran');
    await mkdir(marker);
    const onW1 = join(packageOn('w1'), 'queue-plugin.mjs');
    const onW2 = join(packageOn('w2'), 'queue-plugin.mjs');
    const w1Before = createHash('sha256')
      .update(await readFile(onW1))
      .digest('hex');
    const original = await readFile(onW2, 'utf8');
    // The changed bytes leave a file behind if they ever run.
    await writeFile(
      onW2,
      original.replace(
        "const PROTOCOL = 'switchyard.plugin/v1';",
        `const PROTOCOL = 'switchyard.plugin/v1';\nwriteFileSync(${JSON.stringify(marker)} + '/' + process.pid, 'ran');`,
      ),
    );
    const { fingerprint: trusted } = await ok<{ fingerprint: string }>(
      http.request('GET', `/plugins/${PLUGIN}`),
      'plugin',
    );
    const batch = await ok<BatchView>(
      http.request('POST', '/batches', { pluginId: PLUGIN, projects: ids.slice(0, 200) }),
      'create batch',
    );
    const { view } = await followBatch(batch.batchId, 120_000);
    const plugin = await ok<{ enabled: boolean; trust: string; fingerprint: string }>(
      http.request('GET', `/plugins/${PLUGIN}`),
      'plugin',
    );
    const audit = (
      await ok<{ items: { at: string; action: string; actor: string; detail: Record<string, string> }[] }>(
        http.request('GET', '/audit?limit=200'),
        'audit',
      )
    ).items;
    const changed = audit.filter((entry) => entry.action === 'plugin.fingerprint-changed');
    const w1Calls = await callsOn('w1');
    const lastW1 = Math.max(...w1Calls.map((line) => Number(line.split(' ')[4])));
    console.log(
      `changed on w2: ${changed.map((entry) => `${entry.detail.seenBy} saw trusted ${entry.detail.trusted?.slice(0, 12)}… now ${entry.detail.current?.slice(0, 12)}…`).join('; ')}; ` +
        `batch after the change: ${view.succeeded} succeeded (original bytes), ${view.failed} refused`,
    );
    expect(plugin.enabled).toBe(false);
    expect(plugin.trust).toBe('changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.detail.seenBy).toMatch(/^worker:w2:\d+$/);
    expect(changed[0]!.detail.trusted).toBe(trusted);
    expect(changed[0]!.detail.current).toMatch(/^[0-9a-f]{64}$/);
    expect(changed[0]!.detail.current).not.toBe(trusted);
    expect(await readdir(marker), 'the changed bytes never ran, on any host').toEqual([]);
    expect(
      createHash('sha256')
        .update(await readFile(onW1))
        .digest('hex'),
    ).toBe(w1Before);
    // Once disabled, no host starts the plugin again (2 s for calls already past their checks).
    expect(lastW1).toBeLessThan(Date.parse(changed[0]!.at) + 2_000);
    expect(view.total).toBe(200);
    expect(view.failed).toBeGreaterThan(0);
  }, 200_000);

  it('prints the run table', async () => {
    const share = await Promise.all(WORKERS.map(async (host) => (await callsOn(host)).length));
    console.log(
      runTable(
        'multi-host (netns: redis TLS+ACL, w1, w2, api+scheduler)',
        WORKERS.map((host, index) => ({ host, jobsServed: share[index]! })),
        {
          partitions: tally.partitions,
          failovers: 0,
          projectsLost: tally.lostProjects,
          operationsLost: tally.lostOperations,
          duplicateMutations: tally.duplicates,
        },
        [
          `api restarts ${tally.apiRestarts}`,
          `cut-off host's plugin outlived the OUTCOME_UNKNOWN by ${overlapMs === undefined ? '?' : (overlapMs / 1000).toFixed(1)} s`,
          `suite wall time ${((performance.now() - started) / 1000).toFixed(1)} s`,
        ],
      ),
    );
    expect(tally.lostProjects + tally.lostOperations + tally.duplicates).toBe(0);
  });
});
