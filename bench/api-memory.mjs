// The api process's memory while it serves a batch of large results: a
// batch of N projects (default 280) whose results are about 1 MiB each,
// recorded through the batch store 10 at a time (as workers record) while 16
// viewers follow it over Server-Sent Events; then, the batch ended, 16
// readers at once read it: 8 walk its /results pages, 8 read GET
// /batches/:id whole. The api's resident memory (VmRSS of /proc/<pid>/status)
// is sampled every 20 ms: the peak of each phase is printed against the
// idle api in the same run, with the bytes the readers were sent.
//
//   node bench/api-memory.mjs [projects=280] [result-KiB=1024]
import { readFile } from 'node:fs/promises';
import {
  FIXTURE_INSPECTOR_DIST,
  cleanup,
  machineNote,
  makeInstallation,
  sleep,
  startApi,
  startRedis,
  table,
} from './lib.mjs';

const count = Number(process.argv[2] ?? 280);
const resultKiB = Number(process.argv[3] ?? 1024);
const PLUGIN = 'fixture-inspector';
const READERS = 16;
const MiB = 1024 * 1024;

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: PLUGIN, from: FIXTURE_INSPECTOR_DIST, id: PLUGIN, enable: false },
  ]);
  const ids = Array.from({ length: count }, (_, index) => `p${String(index).padStart(5, '0')}`);
  const { store } = install.runtime.batches;
  const batch = await store.create(PLUGIN, ids, 'user:bench');
  const viewer = (await install.runtime.tokens.create('memory-viewer', 'viewer', 'user:bench')).token;

  const { api, base } = await startApi(install, redis.url, {
    stdio: process.env.BENCH_API_LOG ? ['ignore', 'inherit', 'inherit'] : 'ignore',
  });
  const headers = { authorization: `Bearer ${viewer}` };
  await sleep(1_000);
  const idle = (await rssMiB(api.pid)) ?? 0;

  // Sampling: the peak since the last reset.
  let peak = idle;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await rssMiB(api.pid)) ?? 0);
      await sleep(20);
    }
  })();

  // Phase 1: 16 followers while the results are recorded.
  let streamed = 0;
  let dropped = 0;
  const followers = Array.from({ length: READERS }, async () => {
    try {
      const response = await globalThis.fetch(`${base}/api/v1/batches/${batch.batchId}/events`, { headers });
      if (!response.body) throw new Error(`events: ${response.status}`);
      for await (const chunk of response.body) streamed += chunk.length;
    } catch {
      dropped++; // the api cut a stream its client did not read in time (sse.ts MAX_UNSENT_BYTES)
    }
  });
  await sleep(500);
  const summary = 'x'.repeat(resultKiB * 1024);
  const observedAt = new Date().toISOString();
  const recordStarted = performance.now();
  for (let start = 0; start < ids.length; start += 10)
    await store.recordAll(
      batch.batchId,
      PLUGIN,
      ids.slice(start, start + 10).map((projectId) => ({
        projectId,
        status: /** @type {const} */ ('succeeded'),
        result: { summary, facts: [], actions: [], warnings: [], observedAt },
      })),
    );
  await Promise.all(followers);
  const followPeak = peak;
  const followSeconds = (performance.now() - recordStarted) / 1000;

  // Phase 2: 16 readers of the ended batch at once.
  peak = (await rssMiB(api.pid)) ?? 0;
  const readStarted = performance.now();
  let read = 0;
  const pageWalker = async () => {
    let offset = 0;
    for (;;) {
      const response = await globalThis.fetch(
        `${base}/api/v1/batches/${batch.batchId}/results?offset=${offset}&limit=100`,
        { headers },
      );
      const page = /** @type {{ items: unknown[], total: number }} */ (await response.json());
      read += JSON.stringify(page.items).length;
      offset += page.items.length;
      if (page.items.length === 0 || offset >= page.total) return;
    }
  };
  const wholeReader = async () => {
    const response = await globalThis.fetch(`${base}/api/v1/batches/${batch.batchId}`, { headers });
    if (!response.body) throw new Error(`batch: ${response.status}`);
    for await (const chunk of response.body) read += chunk.length;
  };
  await Promise.all(
    Array.from({ length: READERS }, (_, index) =>
      (index % 2 === 0 ? pageWalker() : wholeReader()).catch((error) => {
        console.error(
          index % 2 === 0 ? 'page walker' : 'whole reader',
          error.cause?.message ?? error.message,
        );
      }),
    ),
  );
  const readPeak = peak;
  const readSeconds = (performance.now() - readStarted) / 1000;
  sampling = false;
  await sampler;

  const batchMiB = (count * resultKiB) / 1024;
  console.log(`event streams the api cut for not reading: ${dropped} of ${READERS}`);
  console.log(
    `api memory: a batch of ${count} results of ${resultKiB} KiB (${batchMiB.toFixed(0)} MiB), ${READERS} readers; ${note}`,
  );
  console.log(
    table(
      ['phase', 'sent to readers MiB', 'seconds', 'api peak RSS MiB', 'over idle MiB', 'peak / idle'],
      [
        ['idle api', '', '', String(idle), '', '1.0'],
        [
          `${READERS} event streams while recorded`,
          (streamed / MiB).toFixed(0),
          followSeconds.toFixed(1),
          String(followPeak),
          String(followPeak - idle),
          (followPeak / (idle || 1)).toFixed(1),
        ],
        [
          `${READERS / 2} /results walkers + ${READERS / 2} GET /batches/:id`,
          (read / MiB).toFixed(0),
          readSeconds.toFixed(1),
          String(readPeak),
          String(readPeak - idle),
          (readPeak / (idle || 1)).toFixed(1),
        ],
      ],
    ),
  );
} finally {
  await cleanup();
}

/** The process's resident memory in MiB (undefined when it is gone). @param {number | undefined} pid */
async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kib === undefined ? undefined : Math.round(Number(kib) / 1024);
}
