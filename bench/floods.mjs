// Floods through ONE real worker process (concurrency 16): 8 concurrent
// inspections whose plugin writes 100 MiB to stderr, and 8 whose plugin sends
// a 1 MiB + 1 byte response line (test/fixtures/fault-plugin.mjs in its
// stderr-flood and oversized-line modes; it misbehaves only once a file named
// `armed` exists in its package dir, so both packages are enabled clean, then
// armed). The worker's peak RSS (VmHWM from /proc/<pid>/status) must stay
// under 200 MiB, every stderr-flood call must succeed and every oversized one
// must fail with OVERSIZED_RESPONSE (a transient error: it is retried up to
// 3 attempts, each of which misbehaves again, before it is recorded as failed).
//
// With a second argument, that many busy processes (one CPU each) run beside it
// for the whole run: the floods under load. The worker's CPU over the run is
// reported: with the helper dropping stderr beyond 1.25 MiB/s per call, a flood
// costs the worker about what a quiet call does.
//
//   node bench/floods.mjs [each=8] [busy=0]
import { spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ACTOR,
  FAULT_PLUGIN,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

// The fault plugin writes pid files into its package directory, which kernel confinement makes read-only:
// confinement is not what this measures.
process.env.SWITCHYARD_CONFINEMENT ??= 'off';
const each = Number(process.argv[2] ?? 8);
const busy = Number(process.argv[3] ?? 0);
const LIMIT_MIB = 200;

/**
 * The fault plugin as a package running in `mode`.
 * @param {string} mode
 * @returns {import('./lib.mjs').BenchPackage}
 */
function faultPackage(mode) {
  const id = `fault-${mode}`;
  return {
    name: id,
    id,
    from: FAULT_PLUGIN,
    scopes: ['project.metadata.read', 'project.files.read'],
    async prepare(target) {
      // cp() copied the single file to `target`; turn it into a package directory.
      const { rm } = await import('node:fs/promises');
      await rm(target, { force: true });
      await mkdir(target, { recursive: true });
      await copyFile(FAULT_PLUGIN, join(target, 'fault-plugin.mjs'));
      await chmod(join(target, 'fault-plugin.mjs'), 0o755);
      const manifest = {
        schemaVersion: 'switchyard.plugin-manifest/v1',
        id,
        name: `Fault plugin (${mode})`,
        version: '1.0.0',
        protocolVersion: 'switchyard.plugin/v1',
        executable: 'fault-plugin.mjs',
        arguments: [mode],
        capabilities: ['project.inspect', 'project.operate'],
        requestedScopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
      };
      await writeFile(join(target, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    },
  };
}

/**
 * A process's CPU time so far (user + system), in ms.
 * @param {number} pid
 */
async function cpuMs(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * Peak and current resident memory of a process, in MiB.
 * @param {number} pid
 */
async function status(pid) {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (/** @type {string} */ name) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) / 1024;
  return { hwm: field('VmHWM'), rss: field('VmRSS') };
}

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    faultPackage('stderr-flood'),
    faultPackage('oversized-line'),
  ]);
  for (const mode of ['stderr-flood', 'oversized-line'])
    await writeFile(join(install.dirs[`fault-${mode}`], 'armed'), '');
  const ids = await addProjects(install, each);
  const worker = await startWorker(install, redis.url, 16);
  const idle = await status(worker.pid);

  let peakRss = idle.rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        peakRss = Math.max(peakRss, (await status(worker.pid)).rss);
      } catch {
        // the worker exited
      }
      await sleep(25);
    }
  })();

  const burners = Array.from({ length: busy }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  const cpuBefore = await cpuMs(worker.pid);
  const service = install.runtime.batches;
  const started = performance.now();
  const batches = {
    flood: await service.create('fault-stderr-flood', ids, ACTOR),
    oversized: await service.create('fault-oversized-line', ids, ACTOR),
  };
  /** @type {Record<string, import('./lib.mjs').ProjectOutcome[]>} */
  const results = {};
  for (const [name, batch] of Object.entries(batches)) {
    for (;;) {
      const view = await service.store.get(batch.batchId);
      if (!view) throw new Error(`batch ${batch.batchId} disappeared while it ran`);
      if (view.state !== 'running') {
        results[name] = view.results ?? [];
        break;
      }
      await sleep(200);
    }
  }
  const wallMs = performance.now() - started;
  const workerCpuMs = (await cpuMs(worker.pid)) - cpuBefore;
  for (const burner of burners) burner.kill('SIGKILL');
  sampling = false;
  await sampler;
  const final = await status(worker.pid);
  await worker.stop();
  // Evidence the floods happened: the kept stderr tail ends with the fixture's 5,000-byte lines.
  const floodLogs = await install.runtime.plugins.logs('fault-stderr-flood', 1000);
  const longLines = floodLogs.filter(
    (entry) => entry.source === 'stderr' && entry.line.length >= 1000,
  ).length;

  const flood = results.flood ?? [];
  const oversized = results.oversized ?? [];
  const floodOk = flood.filter((r) => r.status === 'succeeded').length;
  const oversizedOk = oversized.filter(
    (r) => r.status === 'failed' && r.error?.code === 'OVERSIZED_RESPONSE',
  ).length;
  const otherCodes = [
    ...new Set(
      [...flood, ...oversized]
        .filter((r) => !(r.status === 'succeeded' && flood.includes(r)))
        .map((r) => r.error?.code ?? r.status),
    ),
  ];
  console.log(
    `Floods through one worker process, concurrency 16 (${note}); wall ${(wallMs / 1000).toFixed(1)} s\n`,
  );
  console.log(
    table(
      ['measure', 'value', 'expected'],
      [
        ['worker RSS idle (after start)', `${idle.rss.toFixed(1)} MiB`, ''],
        [
          `worker CPU over the run (${2 * each} calls${busy ? `, ${busy} busy processes beside it` : ''})`,
          `${workerCpuMs.toFixed(0)} ms`,
          '',
        ],
        ['worker RSS peak sampled every 25 ms', `${peakRss.toFixed(1)} MiB`, `< ${LIMIT_MIB} MiB`],
        ['worker VmHWM (kernel peak RSS over its life)', `${final.hwm.toFixed(1)} MiB`, `< ${LIMIT_MIB} MiB`],
        [
          `stderr-flood calls (100 MiB of stderr each)`,
          `${floodOk}/${each} succeeded`,
          `${each}/${each} succeeded`,
        ],
        [
          `oversized-line calls (1 MiB + 1 byte line)`,
          `${oversizedOk}/${each} failed OVERSIZED_RESPONSE`,
          `${each}/${each}`,
        ],
        [
          'stderr tail lines kept in plugin logs (≥ 1,000 chars)',
          String(longLines),
          '> 0 (the flood reached the host)',
        ],
        ['outcome codes seen on the oversized batch', otherCodes.join(', '), 'OVERSIZED_RESPONSE'],
      ],
    ),
  );
  const ok = final.hwm < LIMIT_MIB && floodOk === each && oversizedOk === each;
  console.log(
    `\npeak worker RSS ${final.hwm.toFixed(1)} MiB = ${(final.hwm / LIMIT_MIB).toFixed(2)} of the ${LIMIT_MIB} MiB limit; calls as specified: ${floodOk + oversizedOk}/${2 * each} — ${ok ? 'MET' : 'NOT MET'}`,
  );
} finally {
  await cleanup();
}
