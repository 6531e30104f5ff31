#!/usr/bin/env node
// switchyard-plugin init | conformance | pack: one command for a plugin author
// (an installed host release puts only this one on the PATH).
import { runBuilt } from './run-built.js';

const commands = { conformance: '../dist/conformance/cli.js', pack: '../dist/pack/cli.js' };
const command = process.argv[2];
if (command === 'conformance' || command === 'pack') {
  process.argv.splice(2, 1);
  await runBuilt(`switchyard-plugin ${command}`, commands[command]);
} else {
  await runBuilt('switchyard-plugin', '../dist/init/cli.js');
}
