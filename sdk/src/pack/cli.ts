#!/usr/bin/env node
// switchyard-plugin-pack <entry> [--manifest <plugin.json>] [--out <dir>]
import { parseArgs } from 'node:util';
import { packPlugin } from './pack.js';

const usage =
  'usage: switchyard-plugin-pack <entry-file> [--manifest <plugin.json>] [--out <package-dir>] [--no-minify]';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        manifest: { type: 'string' },
        out: { type: 'string' },
        'no-minify': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(
      `${usage}\n\nBundles the entry into one executable (no node_modules needed at run time)\nand writes it with plugin.json into the package directory.\n\nexample: switchyard-plugin-pack src/main.ts --manifest plugin.json --out dist\n`,
    );
    return 0;
  }
  const [entry, ...extra] = parsed.positionals;
  if (!entry || extra.length > 0) {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  try {
    const result = await packPlugin({
      entry,
      ...(parsed.values.manifest ? { manifest: parsed.values.manifest } : {}),
      ...(parsed.values.out ? { outDir: parsed.values.out } : {}),
      minify: parsed.values['no-minify'] !== true,
    });
    process.stdout.write(
      `packed ${result.manifest.id} ${result.manifest.version} into ${result.outDir}\n` +
        `  executable  ${result.executablePath} (${result.executableBytes} bytes, mode 0755)\n` +
        `  fingerprint ${result.fingerprint}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`switchyard-plugin-pack: ${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main();
