// Spawn path: calls/s of one native-fixture call (initialize + project.inspect,
// stdin closed, exit awaited) on four paths, at a fixed concurrency, variants
// alternating in rounds so machine load hits them alike:
//   node-spawn        — child_process.spawn from this process, the two lines by hand
//   helper            — the same through the native spawn helper (dist/native/sy-spawner)
//   supervisor-group  — superviseCall with SWITCHYARD_SPAWNER=process-group (execa, today's path)
//   supervisor-helper — superviseCall through the helper (subreaper containment)
// Usage: node bench/spawn-path.mjs [calls per variant = 1000] [concurrency = 4] [rounds = 4]
// Needs `npm run build` (dist/, the native fixture and the helper).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pluginEnvironment } from '@switchyard/plugin-sdk/host';
import { HELPER_PATH, Spawner, containment, superviseCall } from '../dist/core/supervision/index.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

const CALLS = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.argv[3] ?? 4);
const ROUNDS = Number(process.argv[4] ?? 4);
const PACKAGE = join(REPO, 'examples/plugins/native-fixture/dist');
const EXECUTABLE = join(PACKAGE, 'native-fixture');
const manifest = JSON.parse(readFileSync(join(PACKAGE, 'plugin.json'), 'utf8'));
/** @type {import('@switchyard/plugin-sdk').Scope[]} */
const GRANTS = ['project.metadata.read'];
const env = pluginEnvironment();
/** @param {number} index */
const project = (index) => ({ id: `p${index}`, displayName: `Project ${index}` });
/** @param {number} index */
const lines = (index) =>
  `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 'switchyard.plugin/v1', hostVersion: 'bench', grantedScopes: GRANTS } })}\n` +
  `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'project.inspect', params: { project: project(index) } })}\n`;

/**
 * Resolves once two newline-terminated answers arrived on `stdout`.
 * @param {import('node:stream').Readable | import('../dist/core/supervision/relayed-stdio.js').CallOutput} stdout
 * @returns {Promise<void>}
 */
function twoAnswers(stdout) {
  return new Promise((resolve, reject) => {
    let newlines = 0;
    stdout.on('data', (/** @type {Buffer} */ chunk) => {
      for (const byte of chunk) if (byte === 10) newlines++;
      if (newlines >= 2) resolve();
    });
    stdout.on('end', () => (newlines >= 2 ? resolve() : reject(new Error('closed before two answers'))));
  });
}

/** @param {number} index */
async function viaNodeSpawn(index) {
  const child = spawn(EXECUTABLE, [], { cwd: PACKAGE, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stderr.resume();
  const answered = twoAnswers(child.stdout);
  child.stdin.write(lines(index));
  await answered;
  child.stdin.end();
  await exited;
}

const helper = new Spawner(HELPER_PATH, () => {});
/** @param {number} index */
async function viaHelper(index) {
  const call = await helper.spawn({ file: EXECUTABLE, args: [], cwd: PACKAGE, env });
  call.stderr.on('data', () => {});
  const answered = twoAnswers(call.stdout);
  call.stdin.write(lines(index));
  await answered;
  call.stdin.end();
  await call.exited;
  await call.end();
}

/**
 * @param {'process-group' | 'helper'} mode
 * @returns {(index: number) => Promise<void>}
 */
function viaSupervisor(mode) {
  return async (index) => {
    if (mode === 'process-group') process.env.SWITCHYARD_SPAWNER = 'process-group';
    else delete process.env.SWITCHYARD_SPAWNER;
    await superviseCall({
      executablePath: EXECUTABLE,
      arguments: [],
      packageDir: PACKAGE,
      identity: manifest,
      grants: GRANTS,
      method: 'project.inspect',
      params: { project: project(index) },
    });
  };
}

/**
 * @param {number} count
 * @param {(index: number) => Promise<void>} call
 */
async function pool(count, call) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await call(next++);
    }),
  );
}

/** @type {[string, (index: number) => Promise<void>][]} */
const variants = [
  ['node-spawn', viaNodeSpawn],
  ['helper', viaHelper],
  ['supervisor-group', viaSupervisor('process-group')],
  ['supervisor-helper', viaSupervisor('helper')],
];
const totals = new Map(variants.map(([name]) => [name, { calls: 0, ms: 0 }]));
const perRound = Math.ceil(CALLS / ROUNDS);

for (const [, call] of variants) await pool(20, call); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, call] of variants) {
    const started = performance.now();
    await pool(perRound, call);
    const total = /** @type {{ calls: number, ms: number }} */ (totals.get(name));
    total.calls += perRound;
    total.ms += performance.now() - started;
  }
}

delete process.env.SWITCHYARD_SPAWNER;
console.log(
  `spawn path: ${perRound * ROUNDS} calls per variant, concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds; ` +
    `containment ${containment().mechanism}`,
);
for (const [name, { calls, ms }] of totals) {
  console.log(`  ${name.padEnd(18)} ${((calls / ms) * 1000).toFixed(0).padStart(6)} calls/s`);
}
process.exit(0);
