// Summary of V8 .cpuprofile files (node --cpu-prof): self time per frame and
// per area (node internals by module, each npm package, our dist/ files, the
// SDK, GC, idle). Used by bench/profile-worker.mjs; also runnable alone:
//
//   node bench/cpu-profile.mjs <file.cpuprofile | dir> [top=25]
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @typedef {{ functionName: string, url: string, lineNumber: number }} CallFrame */
/** @typedef {{ nodes: { id: number, callFrame: CallFrame }[], startTime: number, samples: number[], timeDeltas: number[] }} CpuProfile */
/** @typedef {{ totalMs: number, busyMs: number, frames: [string, number][], areas: [string, number][] }} ProfileSummary */

/**
 * Which area a frame's script belongs to.
 * @param {string} url
 * @param {string} functionName
 * @returns {string}
 */
export function areaOf(url, functionName) {
  if (!url) {
    if (functionName.startsWith('(')) return functionName; // (garbage collector), (program), (idle), (root)
    return 'native / builtins';
  }
  if (url.startsWith('node:')) {
    const module = url.slice(5).replace(/^internal\//, '');
    const head = module.split('/')[0] ?? '';
    return `node:${['streams', 'child_process', 'net', 'fs', 'process', 'timers'].includes(head) ? head : module.split('/').slice(0, 2).join('/')}`;
  }
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packaged?.[1]) return packaged[1] === '@switchyard/plugin-sdk' ? 'sdk' : packaged[1];
  if (url.includes('/sdk/dist/')) return 'sdk';
  const ours = /\/dist\/(.+)$/.exec(url);
  if (ours) return `dist/${ours[1]}`;
  return basename(url);
}

/**
 * Self time (ms) by frame and by area, over every profile given; with a
 * window (CLOCK_MONOTONIC µs, as process.hrtime and V8's sample timestamps),
 * only the samples inside it.
 * @param {string[]} files
 * @param {{ fromUs?: number, toUs?: number }} [window]
 * @returns {Promise<ProfileSummary>}
 */
export async function summarise(files, window = {}) {
  const from = window.fromUs ?? -Infinity;
  const to = window.toUs ?? Infinity;
  /** @type {Map<string, number>} */
  const frames = new Map();
  /** @type {Map<string, number>} */
  const areas = new Map();
  let totalMs = 0;
  for (const file of files) {
    /** @type {CpuProfile} */
    const profile = JSON.parse(await readFile(file, 'utf8'));
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    /** @type {Map<number, number>} */
    const selfMs = new Map();
    let at = profile.startTime;
    for (let index = 0; index < profile.samples.length; index += 1) {
      at += profile.timeDeltas[index] ?? 0;
      const delta = (profile.timeDeltas[index + 1] ?? 0) / 1000;
      if (at < from || at > to) continue;
      const id = /** @type {number} */ (profile.samples[index]);
      selfMs.set(id, (selfMs.get(id) ?? 0) + delta);
      totalMs += delta;
    }
    for (const [id, ms] of selfMs) {
      const node = byId.get(id);
      if (!node) continue;
      const { callFrame } = node;
      const name = callFrame.functionName || '(anonymous)';
      const where = callFrame.url ? `${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
      const key = `${name} ${where}`.trim();
      frames.set(key, (frames.get(key) ?? 0) + ms);
      const area = areaOf(callFrame.url, name);
      areas.set(area, (areas.get(area) ?? 0) + ms);
    }
  }
  const idle = (areas.get('(idle)') ?? 0) + (areas.get('(root)') ?? 0);
  return { totalMs, busyMs: totalMs - idle, frames: sorted(frames), areas: sorted(areas) };
}

/**
 * @param {Map<string, number>} map
 * @returns {[string, number][]}
 */
function sorted(map) {
  return [...map.entries()].sort((a, b) => b[1] - a[1]);
}

/** @param {string} url */
function shortUrl(url) {
  const packaged = /node_modules\/(.+)$/.exec(url);
  if (packaged) return packaged[1];
  const ours = /\/((?:sdk\/)?dist\/.+)$/.exec(url);
  if (ours) return ours[1];
  return url.replace(/^node:/, 'node:');
}

/**
 * Markdown: the busy (non-idle) time split by area, then the top frames by self time.
 * @param {ProfileSummary} summary
 * @param {{ top?: number, calls?: number }} [options]
 */
export function render(summary, { top = 25, calls } = {}) {
  const pct = (/** @type {number} */ ms) => `${((ms / summary.busyMs) * 100).toFixed(1)} %`;
  const perCall = (/** @type {number} */ ms) =>
    calls ? ` · ${((ms / calls) * 1000).toFixed(0)} µs/call` : '';
  const lines = [
    `profiled ${(summary.totalMs / 1000).toFixed(2)} s, busy (not idle) ${(summary.busyMs / 1000).toFixed(2)} s` +
      (calls ? ` = ${(summary.busyMs / calls).toFixed(3)} ms per call over ${calls} calls` : ''),
    '',
    '| area | self ms | share of busy |',
    '|---|---|---|',
  ];
  for (const [area, ms] of summary.areas) {
    if (area === '(idle)' || area === '(root)') continue;
    if (ms / summary.busyMs < 0.005) continue;
    lines.push(`| ${area} | ${ms.toFixed(0)} | ${pct(ms)}${perCall(ms)} |`);
  }
  lines.push('', '| frame (self time) | self ms | share of busy |', '|---|---|---|');
  for (const [frame, ms] of summary.frames.filter(([name]) => !/^\((idle|root)\)/.test(name)).slice(0, top)) {
    lines.push(`| \`${frame}\` | ${ms.toFixed(0)} | ${pct(ms)} |`);
  }
  return lines.join('\n');
}

/** @param {string} target a .cpuprofile file or a directory of them */
export async function profileFiles(target) {
  if ((await stat(target)).isDirectory()) {
    return (await readdir(target))
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(target, name));
  }
  return [target];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  if (!target) throw new Error('usage: node bench/cpu-profile.mjs <file.cpuprofile | dir> [top=25]');
  const summary = await summarise(await profileFiles(target));
  console.log(render(summary, { top: Number(process.argv[3] ?? 25) }));
}
