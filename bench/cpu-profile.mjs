// Summary of V8 .cpuprofile files (node --cpu-prof): self time per frame and
// per area (node internals by module, each npm package, our dist/ files, the
// SDK, GC, idle). Used by bench/profile-worker.mjs; also runnable alone:
//
//   node bench/cpu-profile.mjs <file.cpuprofile | dir> [top=25]
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which area a frame's script belongs to. */
export function areaOf(url, functionName) {
  if (!url) {
    if (functionName.startsWith('(')) return functionName; // (garbage collector), (program), (idle), (root)
    return 'native / builtins';
  }
  if (url.startsWith('node:')) {
    const module = url.slice(5).replace(/^internal\//, '');
    const head = module.split('/')[0];
    return `node:${['streams', 'child_process', 'net', 'fs', 'process', 'timers'].includes(head) ? head : module.split('/').slice(0, 2).join('/')}`;
  }
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packaged) return packaged[1] === '@switchyard/plugin-sdk' ? 'sdk' : packaged[1];
  if (url.includes('/sdk/dist/')) return 'sdk';
  const ours = /\/dist\/(.+)$/.exec(url);
  if (ours) return `dist/${ours[1]}`;
  return basename(url);
}

/**
 * Self time (ms) by frame and by area, over every profile given; with a
 * window (CLOCK_MONOTONIC µs, as process.hrtime and V8's sample timestamps),
 * only the samples inside it.
 */
export async function summarise(files, window = {}) {
  const from = window.fromUs ?? -Infinity;
  const to = window.toUs ?? Infinity;
  const frames = new Map();
  const areas = new Map();
  let totalMs = 0;
  for (const file of files) {
    const profile = JSON.parse(await readFile(file, 'utf8'));
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const selfMs = new Map();
    let at = profile.startTime;
    for (let index = 0; index < profile.samples.length; index += 1) {
      at += profile.timeDeltas[index];
      const delta = (profile.timeDeltas[index + 1] ?? 0) / 1000;
      if (at < from || at > to) continue;
      const id = profile.samples[index];
      selfMs.set(id, (selfMs.get(id) ?? 0) + delta);
      totalMs += delta;
    }
    for (const [id, ms] of selfMs) {
      const { callFrame } = byId.get(id);
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

function sorted(map) {
  return [...map.entries()].sort((a, b) => b[1] - a[1]);
}

function shortUrl(url) {
  const packaged = /node_modules\/(.+)$/.exec(url);
  if (packaged) return packaged[1];
  const ours = /\/((?:sdk\/)?dist\/.+)$/.exec(url);
  if (ours) return ours[1];
  return url.replace(/^node:/, 'node:');
}

/** Markdown: the busy (non-idle) time split by area, then the top frames by self time. */
export function render(summary, { top = 25, calls } = {}) {
  const pct = (ms) => `${((ms / summary.busyMs) * 100).toFixed(1)} %`;
  const perCall = (ms) => (calls ? ` · ${((ms / calls) * 1000).toFixed(0)} µs/call` : '');
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

export async function profileFiles(target) {
  if ((await stat(target)).isDirectory()) {
    return (await readdir(target))
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(target, name));
  }
  return [target];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const summary = await summarise(await profileFiles(process.argv[2]));
  console.log(render(summary, { top: Number(process.argv[3] ?? 25) }));
}
