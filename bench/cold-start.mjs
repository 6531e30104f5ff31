// Cold start: a bundled SDK plugin answering initialize + one inspect, against
// `node -e 0` (Node's own start-up), median of many alternating runs. Target ≤ 1.2.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packPlugin } from '@switchyard/plugin-sdk/pack';

const runs = Number(process.argv[2] ?? 60);
const repo = fileURLToPath(new URL('..', import.meta.url));
const out = await mkdtemp(join(tmpdir(), 'switchyard-cold-'));
const example = join(repo, 'examples', 'plugins', 'fixture-inspector');
const packed = await packPlugin({
  entry: join(example, 'src', 'main.ts'),
  manifest: join(example, 'plugin.json'),
  outDir: out,
});
const root = await mkdtemp(join(tmpdir(), 'switchyard-cold-project-'));

const requests =
  [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: 'switchyard.plugin/v1',
        hostVersion: 'bench',
        grantedScopes: ['project.metadata.read', 'project.files.read'],
      },
    },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'project.inspect',
      params: { project: { id: 'p', displayName: 'p', root } },
    },
  ]
    .map((request) => JSON.stringify(request))
    .join('\n') + '\n';

/**
 * Wall time of one run of `command`, fed `input` on stdin.
 * @param {string} command
 * @param {string[]} args
 * @param {string} [input]
 * @returns {Promise<number>}
 */
function timeOnce(command, args, input) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { cwd: out, stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) return reject(new Error(`${command} exited ${code}`));
      if (input && output.trim().split('\n').length !== 2)
        return reject(new Error(`expected 2 responses, got: ${output}`));
      resolve(ms);
    });
    child.stdin.end(input ?? '');
  });
}

/** @param {number[]} values */
const median = (values) =>
  /** @type {number} */ ([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);
/** @type {number[]} */
const baseline = [];
/** @type {number[]} */
const plugin = [];
for (let index = 0; index < runs; index += 1) {
  baseline.push(await timeOnce(process.execPath, ['-e', '0']));
  plugin.push(await timeOnce(packed.executablePath, [], requests));
}
await rm(out, { recursive: true, force: true });
await rm(root, { recursive: true, force: true });

const base = median(baseline);
const sdk = median(plugin);
console.log('| what | median ms | runs |');
console.log('|---|---|---|');
console.log(`| node -e 0 | ${base.toFixed(1)} | ${runs} |`);
console.log(
  `| SDK plugin: initialize + project.inspect (${packed.executableBytes} bytes bundled) | ${sdk.toFixed(1)} | ${runs} |`,
);
console.log(`cold start ratio: ${(sdk / base).toFixed(3)} (target ≤ 1.2)`);
