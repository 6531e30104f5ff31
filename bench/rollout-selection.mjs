// A rollout's selection over N projects (`--advertised`: every project's
// latest inspection read for the action and its risk): the per-project reads
// it made before (BatchService.actions, a few round trips each, one project
// after another) against the batched read it makes now (actionsOfEach: two
// HMGETs a slice of 500), and a whole `rollout create --advertised` as it
// runs now. Set-up: N project records written straight into the projects
// hash and one recorded batch whose results advertise the action.
//
//   node bench/rollout-selection.mjs [projects=2000] [runs=3]
import {
  ACTOR,
  FIXTURE_INSPECTOR_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  median,
  startRedis,
  table,
} from './lib.mjs';

const count = Number(process.argv[2] ?? 2_000);
const runs = Number(process.argv[3] ?? 3);
const PLUGIN = 'fixture-inspector';
const ACTION = 'fixture.echo';

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    {
      name: PLUGIN,
      from: FIXTURE_INSPECTOR_DIST,
      id: PLUGIN,
      scopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
    },
  ]);
  const { runtime } = install;
  const ids = await addProjects(install, count);
  const { store } = runtime.batches;
  const batch = await store.create(PLUGIN, ids, ACTOR);
  const observedAt = new Date().toISOString();
  for (let start = 0; start < ids.length; start += 1_000) {
    await store.recordAll(
      batch.batchId,
      PLUGIN,
      ids.slice(start, start + 1_000).map((projectId) => ({
        projectId,
        status: /** @type {const} */ ('succeeded'),
        result: {
          summary: '1 fact',
          facts: [{ id: 'go.version', label: 'Go', value: '1.20', source: 'go.mod' }],
          actions: [{ id: ACTION, name: 'Echo', description: 'echoes its input', risk: 'low' }],
          warnings: [],
          observedAt,
        },
      })),
    );
  }

  /** @param {() => Promise<unknown>} task */
  const timed = async (task) => {
    const times = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      await task();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  const perProject = await timed(async () => {
    for (const id of ids) await runtime.batches.actions(id, PLUGIN);
  });
  const batched = await timed(() => runtime.batches.actionsOfEach(PLUGIN, ids));
  const create = await timed(async () => {
    const rollout = await runtime.rollouts.create(
      { pluginId: PLUGIN, action: ACTION, selection: { advertised: true } },
      ACTOR,
    );
    if (rollout.total !== count) throw new Error(`selected ${rollout.total} of ${count}`);
    await runtime.rollouts.cancel(rollout.id, ACTOR);
  });
  console.log(`${note}\n${count} projects, median of ${runs} runs\n`);
  console.log(
    table(
      ['what', 'ms'],
      [
        ['latest inspections, per project (before)', perProject.toFixed(0)],
        ['latest inspections, batched (now)', batched.toFixed(0)],
        ['rollout create --advertised + cancel (now)', create.toFixed(0)],
      ],
    ),
  );
} finally {
  await cleanup();
}
