// The supervisor's CPU per call, this checkout against another build, in one
// run: sequential rounds alternate between the two builds (each round a fresh
// Node process of that build running `calls` superviseCall calls of the
// native fixture, `plugin.health`, full confinement, `concurrency` at once,
// started from a descriptor as a worker does). Per round: calls/s, that
// process's own CPU per call (process.cpuUsage) and its spawn helper's
// (/proc ticks: the helper is the one long-lived child; keepers and plugins
// are not counted). Medians per build, and this build ÷ the other.
//
//   node bench/supervisor-builds.mjs <other checkout, built> [calls=1500] [concurrency=4] [rounds=4]
//
// (Each round runs `node bench/supervisor-builds.mjs --round <checkout> <calls> <concurrency>`.)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO, healthCaller, machineNote, median, table } from './lib.mjs';

if (process.argv[2] === '--round') {
  await round(resolve(process.argv[3] ?? REPO), Number(process.argv[4]), Number(process.argv[5]));
} else {
  await compare();
}

/**
 * One round in this process, with the dist/ of `checkout`; prints one JSON line.
 * @param {string} checkout
 * @param {number} calls
 * @param {number} concurrency
 */
async function round(checkout, calls, concurrency) {
  const { superviseCall } = await import(join(checkout, 'dist/core/supervision/index.js'));
  const { DEFAULT_RESOURCE_LIMITS } = await import(join(checkout, 'dist/core/plugins/index.js'));
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-builds-'));
  try {
    const call = await healthCaller(dir, {
      superviseCall,
      limits: DEFAULT_RESOURCE_LIMITS,
      fixtureDist: join(checkout, 'examples/plugins/native-fixture/dist'),
    });
    for (let i = 0; i < 50; i++) await call(); // warm: helper started, code compiled
    const helpers = () =>
      readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'latin1')
        .split(' ')
        .filter(Boolean)
        .map(Number);
    const helperMs = () => helpers().reduce((sum, pid) => sum + ticksMs(pid), 0);
    let started = 0;
    const helperBefore = helperMs();
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (started < calls) {
          started++;
          await call();
        }
      }),
    );
    const wall = performance.now() - wallBefore;
    const cpu = process.cpuUsage(cpuBefore);
    console.log(
      JSON.stringify({
        callsPerSecond: (calls / wall) * 1_000,
        processMs: (cpu.user + cpu.system) / 1_000 / calls,
        helperMs: (helperMs() - helperBefore) / calls,
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** @param {number} pid */
function ticksMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function compare() {
  const other = process.argv[2];
  if (!other) {
    console.error(
      'usage: node bench/supervisor-builds.mjs <other checkout, built> [calls] [concurrency] [rounds]',
    );
    process.exit(2);
  }
  const calls = Number(process.argv[3] ?? 1500);
  const concurrency = Number(process.argv[4] ?? 4);
  const rounds = Number(process.argv[5] ?? 4);
  const note = await machineNote();
  const builds = [
    { name: `this (${REPO})`, checkout: REPO },
    { name: `other (${resolve(other)})`, checkout: resolve(other) },
  ];
  /** @type {Record<string, { callsPerSecond: number, processMs: number, helperMs: number }[]>} */
  const results = { [builds[0].name]: [], [builds[1].name]: [] };
  for (let r = 0; r < rounds; r++) {
    // Order rotated per round: neither build always runs first.
    for (const build of r % 2 === 0 ? builds : [...builds].reverse()) {
      const out = execFileSync(
        process.execPath,
        [new URL(import.meta.url).pathname, '--round', build.checkout, String(calls), String(concurrency)],
        { encoding: 'utf8' },
      );
      const result = JSON.parse(out.trim().split('\n').pop() ?? '{}');
      results[build.name].push(result);
      console.log(
        `round ${r + 1}/${rounds} ${build.name}: ${result.callsPerSecond.toFixed(0)} calls/s, ` +
          `process ${result.processMs.toFixed(3)} ms/call, helper ${result.helperMs.toFixed(3)} ms/call`,
      );
    }
  }
  const summary = builds.map((build) => {
    const list = results[build.name];
    return {
      name: build.name,
      callsPerSecond: median(list.map((r) => r.callsPerSecond)),
      processMs: median(list.map((r) => r.processMs)),
      helperMs: median(list.map((r) => r.helperMs)),
    };
  });
  console.log(
    `\nSupervisor CPU per call, ${calls} plugin.health calls × ${rounds} rounds per build, concurrency ${concurrency} (${note})\n`,
  );
  console.log(
    table(
      ['build', 'calls/s (median)', 'process CPU ms/call', 'spawn helper CPU ms/call', 'both'],
      summary.map((s) => [
        s.name,
        s.callsPerSecond.toFixed(0),
        s.processMs.toFixed(3),
        s.helperMs.toFixed(3),
        (s.processMs + s.helperMs).toFixed(3),
      ]),
    ),
  );
  const [self, base] = summary;
  console.log(
    `\nthis ÷ other: calls/s ${(self.callsPerSecond / base.callsPerSecond).toFixed(3)}, ` +
      `CPU per call (process + helper) ${((self.processMs + self.helperMs) / (base.processMs + base.helperMs)).toFixed(3)}`,
  );
}
