// `switchyard demo` (what `npm start` runs): the main job on the embedded
// default, for a new user to watch. A fresh demo data dir, the example plugin
// built and installed, sample projects, the review (fingerprint), trust and
// enable, one batch inspection with progress, the results, the UI address;
// then it keeps serving until Ctrl-C.
import { realpathSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OS_TRUST_BOUNDARY_STATEMENT } from '@switchyard/plugin-sdk/protocol';
import { packPlugin } from '@switchyard/plugin-sdk/pack';
import { localUser, runtimeFor } from '../core/runtime/index.js';
import { createLogger } from '../core/platform/index.js';
import { watchAncestors } from './ancestors.js';
import { apiBackend } from './api-backend.js';
import { InProcessTransport } from './in-process-transport.js';
import { printBatchResults, followWithProgress } from './commands/work-output.js';
import { printPluginTable } from './commands/plugin-commands.js';
import { resolveConfig } from './config.js';
import { StartAborted, startUp, type RunningUp } from './embedded-up.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Sample projects: name → files that fixture-inspector recognises. */
const SAMPLES: Record<string, string[]> = {
  'shop-frontend': ['package.json'],
  'payments-api': ['go.mod', '.switchyard/project.yml'],
  'docs-site': ['package.json', '.switchyard/project.yml'],
  'infra-live': ['.switchyard/project.yml'],
  'legacy-reports': [],
  'mobile-app': ['package.json'],
  'search-service': ['go.mod'],
  'design-system': ['package.json', '.switchyard/project.yml'],
  'data-pipeline': ['go.mod', 'package.json'],
  'ops-scripts': [],
  'auth-gateway': ['go.mod', '.switchyard/project.yml'],
  'marketing-site': ['package.json'],
};

/** What the demo grants: enough for its batch and for the `run` it suggests (project.operate). */
export const DEMO_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];

export interface DemoOptions {
  dataDir?: string;
  port: number;
  workers: number;
}

export async function runDemo(options: DemoOptions): Promise<void> {
  const dataDir = resolve(options.dataDir ?? join(REPO, '.switchyard-demo'));
  const say = (text: string) => process.stdout.write(`${text}\n`);
  const aborter = new AbortController();
  let up: RunningUp | undefined;
  let stopRequested = false;
  const stop = () => {
    if (!up) return aborter.abort();
    if (stopRequested) return;
    stopRequested = true;
    say('\nstopping…');
    void up.stop();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // npm stopped by pid (kill -TERM <npm>) signals only the shell it ran us in: stop with it.
  const unwatch = watchAncestors((pid) => {
    say(`\nthe process that started the demo (pid ${pid}) is gone`);
    stop();
  });
  say(`Switchyard demo — a fresh data dir at ${dataDir}\n`);
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(join(dataDir, 'plugins'), { recursive: true, mode: 0o755 });

  say('1. Building the example plugin (TypeScript → one bundled executable) and installing it');
  const example = join(REPO, 'examples', 'plugins', 'fixture-inspector');
  const packed = await packPlugin({
    entry: join(example, 'src', 'main.ts'),
    manifest: join(example, 'plugin.json'),
    outDir: join(dataDir, 'plugins', 'fixture-inspector'),
  });
  say(`   ${packed.executablePath} (${packed.executableBytes} bytes)\n`);

  const projectsDir = join(dataDir, 'projects');
  for (const [name, files] of Object.entries(SAMPLES)) {
    for (const file of files) {
      await mkdir(dirname(join(projectsDir, name, file)), { recursive: true });
      await writeFile(join(projectsDir, name, file), file.endsWith('.json') ? '{}\n' : '# sample\n');
    }
    await mkdir(join(projectsDir, name), { recursive: true });
  }

  const config = resolveConfig({ dataDir });
  const logger = createLogger('up', 'warn');
  say(`2. Starting Switchyard: embedded redis-server (AOF), api, ${options.workers} workers, scheduler`);
  try {
    up = await startUp(
      config,
      {
        workers: options.workers,
        workerConcurrency: 2,
        host: '127.0.0.1',
        port: options.port,
        logLevel: 'warn',
        appendfsync: 'everysec',
      },
      logger,
      aborter.signal,
    );
  } catch (error) {
    if (error instanceof StartAborted) {
      unwatch();
      say('stopped during start-up');
      return;
    }
    throw error;
  }
  say(`   up at ${up.url}/\n`);

  const runtime = await runtimeFor(config, 'cli', { failFast: true });
  try {
    const actor = localUser();
    say('3. Discovering plugins (nothing is executed)');
    printPluginTable(await runtime.plugins.refresh(actor));
    const detail = await runtime.plugins.show('fixture-inspector');
    say('\n4. Review: the fingerprint is SHA-256(plugin.json ‖ executable)');
    say(`   reviewed fingerprint: ${detail.fingerprint}`);
    say(`   requested scopes:     ${detail.requestedScopes.join(', ')}`);
    say(`   ${OS_TRUST_BOUNDARY_STATEMENT}`);
    await runtime.plugins.trust('fixture-inspector', detail.fingerprint!, actor);
    say('   trusted that exact fingerprint (still disabled)');
    const enabled = await runtime.plugins.enable('fixture-inspector', DEMO_SCOPES, actor);
    say(
      `   enabled with ${enabled.grantedScopes.join(', ')} after a supervised health check: ${enabled.health}\n`,
    );

    say(`5. Registering ${Object.keys(SAMPLES).length} sample projects from ${projectsDir}`);
    await runtime.projects.scan(projectsDir, { trust: true }, actor);

    say('\n6. One batch inspection over every project, each call a fresh supervised process');
    const batch = await runtime.batches.create('fixture-inspector', 'all', actor);
    const started = Date.now();
    const transport = new InProcessTransport(runtime, actor);
    const final = await followWithProgress(apiBackend(transport).work, batch, false).finally(() =>
      transport.close(),
    );
    say('');
    printBatchResults(final);
    say(`   finished in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await runtime.close();
  }
  say(`Switchyard keeps serving at ${up.url}/`);
  say(`   web UI token (admin): ${join(dataDir, 'api-token')} — paste its content when the UI asks`);
  say('Try, in another terminal:');
  const cli = cliInvocation();
  say(`   ${cli} --data-dir ${dataDir} plugin show fixture-inspector`);
  say(
    `   ${cli} --data-dir ${dataDir} run fixture-inspector shop-frontend fixture.echo --input '{"hello":"world"}' --yes --wait`,
  );
  say('Press Ctrl-C to stop everything.');
  await up.stopped;
  unwatch();
  say('stopped; nothing left running.');
}

/**
 * How the reader runs this CLI: `switchyard` when that name on PATH is this
 * installation (npm link, npm install -g), else node and this file. Never
 * `npx switchyard`: outside the clone npx fetches an unrelated public package.
 */
function cliInvocation(): string {
  const self = realpathSync(process.argv[1] ?? '');
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'switchyard');
    try {
      if (dir && realpathSync(candidate) === self) return 'switchyard';
    } catch {
      // Not there: look further.
    }
  }
  return `node ${self}`;
}
