// Per-call overhead breakdown of one supervised inspection, for executables of
// 1 MiB, 10 MiB and 100 MiB (the native fixture binary with bytes appended: an
// ELF with trailing bytes still runs; the padded package is re-trusted):
//   state checks   — core.plugins.authorize + authorizeProject (Redis reads)
//   fingerprint    — before: hashExecutable(manifest, path, { noCache: true }),
//                    i.e. the whole file streamed through SHA-256 on every call;
//                    after: core.plugins.calls.verifyOnDisk (manifest read, executable
//                    checks, fstat, cache keyed on dev/ino/size/mtime ns/ctime ns)
//   spawn / initialize / call / teardown — the supervisor's own phases (outcome.phases)
// Medians over the iterations; before and after alternate.
//
//   node bench/overhead.mjs [iterations=30]
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashExecutable } from '../dist/core/plugins/index.js';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  median,
  sleep,
  startRedis,
  table,
  trustAndEnable,
} from './lib.mjs';

const iterations = Number(process.argv[2] ?? 30);
const MiB = 1 << 20;
const SIZES = [1, 10, 100];

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const [projectId] = await addProjects(install, 1);
  const { plugins } = install.runtime;
  const packageDir = install.dirs['native-fixture'];
  const executable = join(packageDir, 'native-fixture');
  const manifestBytes = await readFile(join(packageDir, 'plugin.json'));

  const rows = [];
  for (const size of SIZES) {
    // Pad to the size, then rediscover and trust + enable the new fingerprint.
    const current = (await readFile(executable)).length;
    const padding = Buffer.alloc(size * MiB - current, 0x5a);
    await appendFile(executable, padding);
    await plugins.refresh('user:bench');
    await trustAndEnable(install.runtime, 'native-fixture', ['project.metadata.read', 'project.files.read']);
    await sleep(2_100); // past the cache's racy-ctime window, as any installed plugin is

    /** @type {Record<'state' | 'before' | 'after' | 'spawn' | 'init' | 'call' | 'teardown' | 'total', number[]>} */
    const m = { state: [], before: [], after: [], spawn: [], init: [], call: [], teardown: [], total: [] };
    const count = size >= 100 ? Math.max(10, Math.floor(iterations / 2)) : iterations;
    for (let index = 0; index < count + 2; index += 1) {
      const warm = index < 2;
      let t = performance.now();
      const record = await plugins.authorize('native-fixture', 'project.inspect', 'project.metadata.read');
      const project = await plugins.authorizeProject(projectId);
      const state = performance.now() - t;

      const measureBefore = async () => {
        const start = performance.now();
        const fingerprint = await hashExecutable(manifestBytes, executable, { noCache: true });
        if (fingerprint !== record.trustedFingerprint) throw new Error('before: fingerprint differs');
        return performance.now() - start;
      };
      const measureAfter = async () => {
        const start = performance.now();
        await plugins.calls.verifyOnDisk(record);
        return performance.now() - start;
      };
      let before;
      let after;
      if (index % 2 === 0) {
        before = await measureBefore();
        after = await measureAfter();
      } else {
        after = await measureAfter();
        before = await measureBefore();
      }

      t = performance.now();
      const outcome = await plugins.calls.call(
        record,
        'project.inspect',
        { project: { id: project.id, displayName: project.displayName, root: project.root } },
        {},
      );
      const total = performance.now() - t;
      if (warm) continue;
      m.state.push(state);
      m.before.push(before);
      m.after.push(after);
      m.spawn.push(outcome.phases.spawnMs);
      m.init.push(outcome.phases.initializeMs);
      m.call.push(outcome.phases.callMs);
      m.teardown.push(outcome.phases.teardownMs);
      m.total.push(total);
    }
    const f = (/** @type {number[]} */ values) => median(values).toFixed(3);
    rows.push([
      `${size} MiB`,
      count,
      f(m.state),
      f(m.before),
      f(m.after),
      (median(m.before) / median(m.after)).toFixed(0) + '×',
      f(m.spawn),
      f(m.init),
      f(m.call),
      f(m.teardown),
      f(m.total),
    ]);
    console.error(`${size} MiB done`);
  }
  console.log(`Per-call overhead, native-fixture padded to each size, medians in ms (${note})\n`);
  console.log(
    table(
      [
        'executable',
        'calls',
        'state checks',
        'fingerprint before (no cache)',
        'fingerprint after (verifyOnDisk, cached)',
        'speed-up',
        'spawn',
        'initialize',
        'call',
        'teardown',
        'PluginCalls.call total (after)',
      ],
      rows,
    ),
  );
  const last = rows[rows.length - 1];
  console.log(
    `\n100 MiB: fingerprint verification ${last[3]} ms before → ${last[4]} ms after (${last[5]}); per-call total with verification after: ${last[10]} ms`,
  );
} finally {
  await cleanup();
}
