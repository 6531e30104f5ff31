// Where the workers' CPU really goes during a batch, from on-CPU samples:
// `perf record -e cpu-clock` of both worker processes (every thread) and their
// spawn helpers while one native-fixture batch runs (2 workers × concurrency 2,
// as batch-throughput.mjs), after a warm-up. V8's own sampler (profile-worker.mjs)
// counts wall time: a write that wakes the helper or Redis also carries the time
// the worker waits for the CPU the woken process took. perf counts only what
// ran, the kernel's part included, and JIT code is named through
// `--perf-basic-prof-only-functions`. Printed: CPU per call by process, self
// time by area, the top frames, and each sample given to the nearest frame of
// our code on its stack (what a function of ours costs with the library and
// kernel work it asks for).
//
//   node bench/perf-worker.mjs [projects=3000] [top=30] [warm-up calls=1500]
// Needs perf: apt-get install -y linux-perf (Debian).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { areaOf } from './cpu-profile.mjs';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  childrenNamed,
  cleanup,
  machineNote,
  makeInstallation,
  onCleanup,
  runBatch,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 3000);
const top = Number(process.argv[3] ?? 30);
const warm = Number(process.argv[4] ?? 1500);
const WORKERS = 2;
const CONCURRENCY = 2;
const HZ = 2000;

try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('bench/perf-worker.mjs needs perf: apt-get install -y linux-perf (Debian)');
  process.exit(1);
}

try {
  const note = await machineNote();
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-perf-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const ids = await addProjects(install, Math.max(projects, warm));
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1)
    workers.push(
      await startWorker(install, redis.url, CONCURRENCY, [], {
        nodeArgs: ['--perf-basic-prof-only-functions'],
      }),
    );
  for (const worker of workers) onCleanup(() => rm(`/tmp/perf-${worker.pid}.map`, { force: true }));
  await sleep(2_100); // past the fingerprint cache's racy-ctime window
  // Warm: V8 optimizes the hot code over the first thousand calls or so.
  await runBatch(install, 'native-fixture', ids.slice(0, warm), { pollMs: 50 });

  const workerPids = workers.map((worker) => worker.pid);
  const helperPids = (await Promise.all(workerPids.map((pid) => childrenNamed(pid, 'sy-spawner')))).flat();
  const data = join(dir, 'perf.data');
  const recorder = spawn(
    'perf',
    [
      'record',
      '-q',
      '-e',
      'cpu-clock',
      '-F',
      String(HZ),
      '-g',
      '-o',
      data,
      '-p',
      [...workerPids, ...helperPids].join(','),
    ],
    { stdio: 'ignore' },
  );
  const recorded = new Promise((resolve) => recorder.once('exit', resolve));
  await sleep(700); // perf attached
  const { batch, ms } = await runBatch(install, 'native-fixture', ids.slice(0, projects), { pollMs: 50 });
  recorder.kill('SIGINT');
  await recorded;
  if (batch.succeeded !== projects)
    throw new Error(`batch: ${batch.succeeded} succeeded, ${batch.failed} failed`);
  const script = join(dir, 'perf.txt');
  execFileSync('sh', ['-c', `perf script -F pid,ip,sym,dso -i '${data}' > '${script}' 2>/dev/null`]);
  const samples = parse(await readFile(script, 'utf8'));

  const msPerCall = (/** @type {number} */ count) => ((count * 1000) / HZ / projects).toFixed(3);
  const workerSet = new Set(workerPids);
  const helperSet = new Set(helperPids);
  const inWorkers = samples.filter((sample) => workerSet.has(sample.pid));
  const inHelpers = samples.filter((sample) => helperSet.has(sample.pid));
  console.log(
    `perf profile of ${WORKERS} workers × concurrency ${CONCURRENCY} and their spawn helpers, ${projects}-project native-fixture batch after ${warm} warm-up calls (${note})`,
  );
  console.log(
    `batch ${(ms / 1000).toFixed(2)} s = ${((projects / ms) * 1000).toFixed(0)} calls/s under perf; ` +
      `${samples.length} samples at ${HZ} Hz: workers ${msPerCall(inWorkers.length)} ms/call ` +
      `(kernel ${msPerCall(inWorkers.filter((sample) => sample.frames[0]?.kernel).length)}), ` +
      `spawn helpers ${msPerCall(inHelpers.length)} ms/call (kernel ${msPerCall(inHelpers.filter((sample) => sample.frames[0]?.kernel).length)})\n`,
  );
  const share = (/** @type {number} */ count) =>
    `${((100 * count) / inWorkers.length).toFixed(1)} % · ${((count * 1e6) / HZ / projects).toFixed(0)} µs/call`;
  const rows = (/** @type {Map<string, number>} */ counts) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => [`\`${name}\``, share(count)]);

  console.log('Workers, self time by area:\n');
  console.log(
    table(
      ['area', 'share of the workers’ samples'],
      rows(countBy(inWorkers, (sample) => areaOfFrame(sample.frames[0]))),
    ),
  );
  console.log('\nWorkers, the top frames (self):\n');
  console.log(table(['frame', 'share'], rows(countBy(inWorkers, (sample) => frameName(sample.frames[0])))));
  console.log(
    '\nWorkers, each sample given to the nearest frame of our code (dist/, the SDK) on its stack:\n',
  );
  console.log(
    table(
      ['our frame (with what it calls outside our code)', 'share'],
      rows(countBy(inWorkers, nearestOurs)),
    ),
  );
  console.log('\nSpawn helpers, the top frames (self):\n');
  console.log(
    table(
      ['frame', 'ms per call'],
      [...countBy(inHelpers, (sample) => frameName(sample.frames[0]))]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([name, count]) => [`\`${name}\``, msPerCall(count)]),
    ),
  );
} finally {
  await cleanup();
}

/** @typedef {{ symbol: string, kernel: boolean, dso: string }} Frame */

/**
 * perf script's samples: the pid line, then one frame per line (leaf first).
 * @param {string} text
 * @returns {{ pid: number, frames: Frame[] }[]}
 */
function parse(text) {
  /** @type {{ pid: number, frames: Frame[] }[]} */
  const samples = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const head = lines.shift();
    if (!head) continue;
    const pid = Number(head.trim().split(/\s+/)[0]);
    const frames = lines.map((line) => {
      const match = /^\s*[0-9a-f]+ (.*) \((.*)\)$/.exec(line);
      const symbol = (match?.[1] ?? line.trim()).replace(/\+0x[0-9a-f]+$/, '');
      const dso = match?.[2] ?? '';
      return { symbol, dso, kernel: dso.includes('kernel') };
    });
    samples.push({ pid, frames });
  }
  return samples;
}

/**
 * A JIT frame's name, script and line: `JS:*name url:line:column`.
 * @param {string} symbol
 */
function jsFrame(symbol) {
  const match = /^JS:[*^~+]?(\S*) (\S+):(\d+):\d+$/.exec(symbol);
  return match ? { name: match[1] || '(anonymous)', url: match[2] ?? '', line: match[3] ?? '' } : undefined;
}

/** @param {Frame | undefined} frame */
function frameName(frame) {
  if (!frame) return '(none)';
  const js = jsFrame(frame.symbol);
  if (js)
    return `${js.name} ${js.url.replace(/^file:\/\/.*?\/((sdk\/)?dist\/)/, '$1').replace(/^.*node_modules\//, '')}:${js.line}`;
  return frame.kernel ? `[kernel] ${frame.symbol}` : frame.symbol;
}

/** @param {Frame | undefined} frame */
function areaOfFrame(frame) {
  if (!frame) return '(none)';
  if (frame.kernel) return 'kernel';
  const js = jsFrame(frame.symbol);
  if (js) return areaOf(js.url.replace(/^file:\/\//, ''), js.name);
  if (/libc|ld-linux/.test(frame.dso)) return 'libc';
  if (/Builtins_/.test(frame.symbol)) return 'V8 builtins (ICs, calls, promises)';
  if (/v8::internal::(compiler|Compiler|OptimizingCompile|maglev)/.test(frame.symbol)) return 'V8 compiler';
  if (/Heap|Scavenge|MarkCompact|GC/.test(frame.symbol)) return 'V8 GC';
  return 'node / V8 native';
}

/** @param {{ frames: Frame[] }} sample */
function nearestOurs(sample) {
  for (const frame of sample.frames) {
    const js = jsFrame(frame.symbol);
    if (js && /\/(sdk\/)?dist\//.test(js.url) && !js.url.includes('node_modules')) return frameName(frame);
  }
  const js = sample.frames.find((frame) => jsFrame(frame.symbol));
  if (js) return `(no frame of ours) ${frameName(js)}`;
  return `(no JS) ${areaOfFrame(sample.frames[0])}`;
}

/**
 * @template T
 * @param {T[]} items
 * @param {(item: T) => string} key
 */
function countBy(items, key) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
