// Redis cost per plugin call of an orchestrated batch: one batch of N
// native-fixture inspections (createBatch → finished) on 2 worker processes ×
// concurrency 2, with this bench's own redis-server. Its statistics are reset
// (CONFIG RESETSTAT) after a warm-up batch and read once the measured batch
// has finished: INFO commandstats (every command, also those run inside Lua
// scripts and by BullMQ, and the bench's own polling of the batch) and INFO
// cpu. Prints commands per call, in total and by command (with the µs
// commandstats measured in each); Redis CPU per call two ways (commandstats'
// usec summed ÷ N: time in commands only, a script's commands counted in its
// EVALSHA too, so an upper bound; and used_cpu_sys + used_cpu_user ÷ N: the
// whole server, network and idle housekeeping included); and
// the calls/s one Redis core could serve at that cost (1 s ÷ CPU per call).
// Targets: ≤ 3 commands per call; the calls/s one Redis core serves (the whole server's CPU per call) ≥ 50× the
// calls/s of this batch, what one 2-core worker machine makes (a ratio of the same run: it holds on any machine).
//
//   node bench/redis-per-call.mjs [--projects 1000] [--rounds 3]
import { parseArgs } from 'node:util';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  connect,
  machineNote,
  makeInstallation,
  median,
  runBatch,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    projects: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
});
const projects = Number(values.projects);
const rounds = Number(values.rounds);
const WORKERS = 2;
const CONCURRENCY = 2;
/** One Redis core serves at least this many times what one 2-core worker machine makes. */
const CAPACITY_TARGET = 50;

/**
 * INFO commandstats as command → { calls, usec }.
 * @param {string} text
 */
function commandStats(text) {
  /** @type {Map<string, { calls: number, usec: number }>} */
  const stats = new Map();
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (match) stats.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

/**
 * used_cpu_sys + used_cpu_user of INFO cpu, in ms.
 * @param {string} text
 */
function serverCpuMs(text) {
  const field = (/** @type {string} */ name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1]);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
}

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const ids = await addProjects(install, projects);
  for (let index = 0; index < WORKERS; index += 1) await startWorker(install, redis.url, CONCURRENCY);
  // The fingerprint cache refuses files changed in the last 2 s (racy ctime): let the copy age.
  await sleep(2_100);
  const client = connect(redis.url);
  await client.connect();
  await runBatch(install, 'native-fixture', ids.slice(0, 40), { pollMs: 250 });

  /** @type {{ commands: Map<string, number>, usecs: Map<string, number>, total: number, usecMs: number, cpuMs: number, callsPerSecond: number }[]} */
  const measured = [];
  for (let round = 0; round < rounds; round += 1) {
    await client.config('RESETSTAT');
    const cpuBefore = serverCpuMs(await client.info('cpu'));
    const { batch, ms } = await runBatch(install, 'native-fixture', ids, { pollMs: 250 });
    const cpuAfter = serverCpuMs(await client.info('cpu'));
    const stats = commandStats(await client.info('commandstats'));
    if (batch.succeeded !== projects)
      throw new Error(`batch ended ${batch.succeeded} succeeded / ${batch.failed} failed`);
    // The bench's own reads of INFO are not the batch's.
    stats.delete('info');
    stats.delete('config|resetstat');
    /** @type {Map<string, number>} */
    const commands = new Map();
    /** @type {Map<string, number>} */
    const usecs = new Map();
    let total = 0;
    let usec = 0;
    for (const [name, { calls, usec: spent }] of stats) {
      commands.set(name, calls / projects);
      usecs.set(name, spent / projects);
      total += calls;
      usec += spent;
    }
    measured.push({
      commands,
      usecs,
      total: total / projects,
      usecMs: usec / 1000 / projects,
      cpuMs: (cpuAfter - cpuBefore) / projects,
      callsPerSecond: (projects / ms) * 1000,
    });
    console.error(
      `round ${round + 1}/${rounds}: ${(total / projects).toFixed(2)} commands/call, ${((projects / ms) * 1000).toFixed(0)} calls/s`,
    );
  }
  client.disconnect();

  const names = [...new Set(measured.flatMap((round) => [...round.commands.keys()]))];
  const perName = names
    .map((name) => ({
      name,
      value: median(measured.map((round) => round.commands.get(name) ?? 0)),
      usec: median(measured.map((round) => round.usecs.get(name) ?? 0)),
    }))
    .sort((a, b) => b.value - a.value || a.name.localeCompare(b.name));
  const total = median(measured.map((round) => round.total));
  const usecMs = median(measured.map((round) => round.usecMs));
  const cpuMs = median(measured.map((round) => round.cpuMs));
  console.log(
    `Redis per call, ${projects}-project batch, native-fixture, ${WORKERS} workers × concurrency ${CONCURRENCY}, medians of ${rounds} rounds (${note})\n`,
  );
  console.log(
    table(
      ['command', 'per call', 'µs per call'],
      perName
        .filter(({ value }) => value >= 0.0005)
        .map(({ name, value, usec }) => [name, value.toFixed(3), usec.toFixed(2)]),
    ),
  );
  const serve = (/** @type {number} */ ms) => (ms > 0 ? (1000 / ms).toFixed(0) : '∞');
  const batchRate = median(measured.map((round) => round.callsPerSecond));
  const capacity = cpuMs > 0 ? 1000 / cpuMs / batchRate : Infinity;
  console.log(
    `\ncommands per call: ${total.toFixed(2)} (target ≤ 3) ${total <= 3 ? 'MET' : 'NOT MET'}` +
      `\nRedis CPU per call, commandstats usec ÷ calls: ${usecMs.toFixed(4)} ms (one core: ${serve(usecMs)} calls/s)` +
      `\nRedis CPU per call, used_cpu_sys + used_cpu_user ÷ calls: ${cpuMs.toFixed(4)} ms (one core: ${serve(cpuMs)} calls/s)` +
      `\nbatch calls/s (median), one ${WORKERS}-worker machine: ${batchRate.toFixed(0)}` +
      `\none Redis core serves ${capacity.toFixed(1)}× what this machine's workers make (target ≥ ${CAPACITY_TARGET}×) ${capacity >= CAPACITY_TARGET ? 'MET' : 'NOT MET'}`,
  );
} finally {
  await cleanup();
}
