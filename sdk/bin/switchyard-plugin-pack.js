#!/usr/bin/env node
// Committed (not built) so npm links this command at install time, before
// sdk/dist exists; it runs the compiled command from dist/.
import { existsSync } from 'node:fs';

const command = new URL('../dist/pack/cli.js', import.meta.url);
if (existsSync(command)) {
  await import(command.href);
} else {
  process.stderr.write(
    'switchyard-plugin-pack: the SDK is not built yet (run `npm run build` in its package)\n',
  );
  process.exitCode = 1;
}
