// Copies what tsc does not: the Lua scripts next to the compiled module that
// loads them, and the web UI (served from dist/api/ui by ui-files.ts) with a
// browser bundle of the contract's Server-Sent Events reader, so the UI reads
// event streams with the same code as the CLI.
import { cp } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await cp(join(root, 'src', 'core', 'redis', 'lua'), join(root, 'dist', 'core', 'redis', 'lua'), {
  recursive: true,
});
const ui = join(root, 'dist', 'api', 'ui');
await cp(join(root, 'src', 'api', 'ui'), ui, { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'core', 'contract', 'server-events.ts')],
  outfile: join(ui, 'server-events.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  legalComments: 'inline',
  logLevel: 'warning',
});
