#!/usr/bin/env node
// switchyard-plugin init <dir> [--lang ts|c|py] [--id <id>]; the bin shim sends
// `switchyard-plugin conformance …` and `switchyard-plugin pack …` to their own commands.
import { parseArgs } from 'node:util';
import { LANGUAGES, initPlugin, type Language } from './init.js';

const usage = `usage: switchyard-plugin init <dir> [--lang ts|c|py] [--id <plugin-id>]
       switchyard-plugin conformance <package-dir> [--strict] [--action <id>] [--timeout-ms <n>] [--json]
       switchyard-plugin pack <entry-file> [--manifest <plugin.json>] [--out <package-dir>]`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        lang: { type: 'string', default: 'ts' },
        id: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(
      `${usage}\n\ninit writes a new plugin that passes the conformance kit as written: TypeScript\n(serve() from @switchyard/plugin-sdk, which it copies into vendor/, packed with\nswitchyard-plugin pack), C (no dependencies) or Python 3 (standard library only).\nThe id defaults to the directory's name. conformance checks a built package\n(--help for more); pack bundles a TypeScript plugin into one executable.\n\nexample: switchyard-plugin init my-inspector --lang py\n`,
    );
    return 0;
  }
  const [command, dir, ...extra] = parsed.positionals;
  if (command !== 'init' || !dir || extra.length > 0) {
    process.stderr.write(
      `${command && command !== 'init' ? `unknown command ${JSON.stringify(command)}\n` : ''}${usage}\n`,
    );
    return 2;
  }
  const lang = parsed.values.lang as Language;
  if (!LANGUAGES.includes(lang)) {
    process.stderr.write(
      `--lang must be ${LANGUAGES.slice(0, -1).join(', ')} or ${LANGUAGES.at(-1)}, not ${JSON.stringify(parsed.values.lang)}\n`,
    );
    return 2;
  }
  try {
    const result = await initPlugin({ dir, lang, ...(parsed.values.id ? { id: parsed.values.id } : {}) });
    process.stdout.write(
      `wrote plugin ${result.id} (${lang}) in ${result.dir}: ${result.files.join(', ')}\nnext:\n${result.next.map((line) => `  ${line}`).join('\n')}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`switchyard-plugin: ${(error as Error).message}\n`);
    return 2;
  }
}

process.exitCode = await main();
