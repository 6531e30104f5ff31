// Plugins as people write them (docs/adr/0008): a stdlib-only Python inspector that
// reads package.json (bench/plugins/py-inspector) and the SDK-built Node
// plugin examples/plugins/fixture-inspector, each run two ways on the same
// projects (each its own root holding a small package.json), same total
// concurrency (4):
//   orchestrated — createBatch → finished, 2 worker processes × concurrency 2,
//                  the plugin trusted and enabled with project.metadata.read +
//                  project.files.read, confined as every call is;
//   minimal      — the minimal host (bench/minimal-host.c with --roots: the
//                  project's root sent and project.files.read granted), 4
//                  threads, the same executable in its package directory.
// Each variant is warmed up once (uncounted), then the four alternate over the
// rounds, order rotated each round, so background load hits them alike.
// Figures: calls/s per round and their medians, orchestrated ÷ minimal of the
// medians, and the median of each round's own ratio (steadier when the
// machine's speed drifts between rounds). Target: ≥ 0.97 for both plugins.
// Every orchestrated outcome is checked to hold the package.json it read, so
// a call that confinement kept from the file cannot pass as a fast one.
//
//   node bench/plugins-as-written.mjs [projects=1000] [rounds=3]
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pluginEnvironment } from '@switchyard/plugin-sdk/host';
import {
  FIXTURE_INSPECTOR_DIST,
  REPO,
  addProjects,
  buildMinimalHost,
  cleanup,
  loadAverage,
  machineNote,
  makeInstallation,
  median,
  minimalHostRequest,
  pool,
  rotatedRounds,
  runBatch,
  runMinimalHost,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 3);
const WORKERS = 2;
const CONCURRENCY = 2;
const TOTAL = WORKERS * CONCURRENCY;
const TARGET = 0.97;
const SCOPES = ['project.metadata.read', 'project.files.read'];

/** @typedef {{ facts?: { id: string, value: string }[] } | undefined} Result */
/**
 * What each plugin must answer for project `id` to show it read that project's package.json.
 * @type {{ id: string, label: string, from: string, read: (result: Result, id: string) => boolean }[]}
 */
const PLUGINS = [
  {
    id: 'py-inspector',
    label: 'py-inspector (Python 3, stdlib only)',
    from: join(REPO, 'bench', 'plugins', 'py-inspector'),
    read: (result, id) =>
      result?.facts?.some((fact) => fact.id === 'package.name' && fact.value === `project-${id}`) === true,
  },
  {
    id: 'fixture-inspector',
    label: 'fixture-inspector (Node, plugin SDK)',
    from: FIXTURE_INSPECTOR_DIST,
    read: (result) => result?.facts?.some((fact) => fact.value === 'package.json') === true,
  },
];

/**
 * One call of the minimal host's exact bytes (lib's mirror of its --roots mode), straight to the plugin:
 * the minimal host itself only checks for a "result", so this shows once that the plugin reads the root it gets.
 * @param {string} executable
 * @param {string} cwd
 * @param {string} roots
 * @returns {Promise<Result>}
 */
function directCall(executable, cwd, roots) {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, [], {
      cwd,
      env: pluginEnvironment(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out.split('\n')[1]).result);
      } catch {
        reject(new Error(`${executable}: no inspect result in ${JSON.stringify(out.slice(0, 500))}`));
      }
    });
    child.stdin.end(minimalHostRequest('000000', roots));
  });
}

try {
  const note = await machineNote();
  const minimalHost = await buildMinimalHost();
  const redis = await startRedis();
  const install = await makeInstallation(
    redis.url,
    PLUGINS.map((plugin) => ({ name: plugin.id, from: plugin.from, id: plugin.id, scopes: SCOPES })),
  );
  const ids = await addProjects(install, projects, { eachRoot: true });
  // A small package.json per project, as a Node project has: name, version, a few dependencies.
  await pool(ids.length, 16, (index) =>
    writeFile(
      join(install.projectsDir, ids[index], 'package.json'),
      `${JSON.stringify(
        {
          name: `project-${ids[index]}`,
          version: `1.0.${index}`,
          dependencies: { ioredis: '^5.4.0', bullmq: '^5.0.0', zod: '^4.0.0' },
          devDependencies: { typescript: '^5.9.0' },
        },
        null,
        2,
      )}\n`,
    ),
  );
  /** @type {Record<string, string>} */
  const executables = {};
  for (const plugin of PLUGINS) {
    const packageDir = install.dirs[plugin.id];
    const manifest = JSON.parse(await readFile(join(packageDir, 'plugin.json'), 'utf8'));
    executables[plugin.id] = join(packageDir, manifest.executable);
    const result = await directCall(executables[plugin.id], packageDir, install.projectsDir);
    if (!plugin.read(result, ids[0]))
      throw new Error(`${plugin.id} did not report p000000's package.json: ${JSON.stringify(result)}`);
  }
  /** @type {import('./lib.mjs').BenchWorker[]} */
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1) {
    workers.push(await startWorker(install, redis.url, CONCURRENCY));
  }
  // The fingerprint cache refuses files changed in the last 2 s (racy ctime): let the copies age.
  await sleep(2_100);

  /** @param {(typeof PLUGINS)[number]} plugin */
  const orchestrated = async (plugin) => {
    const { batch, ms } = await runBatch(install, plugin.id, ids, { pollMs: 20 });
    if (batch.succeeded !== projects)
      throw new Error(`${plugin.id}: batch ended ${batch.succeeded} succeeded / ${batch.failed} failed`);
    const outcomes = await install.runtime.batches.store.outcomesOf(batch.batchId, ids);
    const unread = outcomes.filter((outcome) => !plugin.read(outcome.result, outcome.projectId));
    if (unread.length > 0 || outcomes.length !== projects)
      throw new Error(
        `${plugin.id}: ${unread.length} of ${outcomes.length} results without their package.json, e.g. ${JSON.stringify(unread[0])}`,
      );
    return ms;
  };
  /** @param {(typeof PLUGINS)[number]} plugin */
  const minimal = async (plugin) =>
    (
      await runMinimalHost(
        minimalHost,
        executables[plugin.id],
        install.dirs[plugin.id],
        projects,
        TOTAL,
        pluginEnvironment(),
        { roots: install.projectsDir },
      )
    ).ms;

  /** @type {Record<string, () => Promise<number>>} */
  const variants = {};
  for (const plugin of PLUGINS) {
    variants[`${plugin.id} orchestrated`] = () => orchestrated(plugin);
    variants[`${plugin.id} minimal`] = () => minimal(plugin);
  }
  // Warm-up, uncounted: one whole batch per plugin (the workers' hot path compiled, the run copy made),
  // and the minimal host over the same projects (page cache of the interpreter and the roots).
  for (const name of Object.keys(variants)) {
    const ms = await variants[name]();
    console.error(`warm-up ${name}: ${((projects / ms) * 1000).toFixed(1)} calls/s`);
  }

  const { times, loads } = await rotatedRounds(
    variants,
    rounds,
    (ms) => `${((projects / ms) * 1000).toFixed(1)} calls/s`,
  );
  loads.push(await loadAverage());

  const perSecond = (/** @type {number} */ ms) => (projects / ms) * 1000;
  const rows = [];
  const summaries = [];
  for (const plugin of PLUGINS) {
    const orch = times[`${plugin.id} orchestrated`];
    const min = times[`${plugin.id} minimal`];
    const ratio = perSecond(median(orch)) / perSecond(median(min));
    // The same round's minimal ms ÷ orchestrated ms is its calls/s ratio.
    const roundRatio = median(orch.map((ms, round) => min[round] / ms));
    rows.push([
      plugin.label,
      orch.map((ms) => perSecond(ms).toFixed(1)).join(', '),
      min.map((ms) => perSecond(ms).toFixed(1)).join(', '),
      perSecond(median(orch)).toFixed(1),
      perSecond(median(min)).toFixed(1),
      `**${ratio.toFixed(3)}**`,
      roundRatio.toFixed(3),
    ]);
    summaries.push(
      `${plugin.id}: orchestrated ÷ minimal ${ratio.toFixed(3)} (rounds' median ${roundRatio.toFixed(3)}; ` +
        `target ≥ ${TARGET}) ${ratio >= TARGET ? 'MET' : 'NOT MET'}`,
    );
  }
  console.log(
    `Plugins as written, ${projects} projects, ${rounds} rounds; orchestrated: ${WORKERS} worker processes × ` +
      `concurrency ${CONCURRENCY}; minimal: bench/minimal-host.c --roots, ${TOTAL} threads ` +
      `(${note}; load average per round and at the end: ${loads.join(' / ')})\n`,
  );
  console.log(
    table(
      [
        'plugin',
        'orchestrated calls/s per round',
        'minimal host calls/s per round',
        'orchestrated (median)',
        'minimal host (median)',
        'orchestrated ÷ minimal',
        "rounds' ratios (median)",
      ],
      rows,
    ),
  );
  console.log(`\n${summaries.join('\n')}`);
  for (const worker of workers) await worker.stop();
} finally {
  await cleanup();
}
