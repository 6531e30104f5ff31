#!/usr/bin/env node
import { runBuilt } from './run-built.js';

await runBuilt('switchyard-plugin', '../dist/init/cli.js');
