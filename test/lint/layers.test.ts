// The layer rules of eslint.config.js fire on planted bad imports (files
// written into the tree for the test and removed after it) and pass on the
// real tree: src/core imports no shell, sdk/ never imports src/, shells do
// not import each other (the CLI only starts the others through run.js).
// And the web UI's modules import no cycle (views once imported app.js back).
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';

const RULE = 'no-restricted-imports';
const tag = `__planted_${process.pid}__`;

/** [file relative to the repository, its content, whether the layer rule must fire] */
const PLANTED: [string, string, boolean][] = [
  [
    `src/core/${tag}.ts`,
    `import { globalsOf } from '../cli/context.js';\nexport const x = globalsOf;\n`,
    true,
  ],
  [
    `src/core/${tag}/deeper.ts`,
    `import type { FastifyInstance } from 'fastify';\nimport type { buildApi } from '../../api/server.js';\nexport type X = typeof buildApi | FastifyInstance;\n`,
    true,
  ],
  [
    `src/core/${tag}-fine.ts`,
    `import { PackageInvalidError } from './errors.js';\nexport const x = PackageInvalidError;\n`,
    false,
  ],
  [
    `sdk/src/${tag}.ts`,
    `import { PackageInvalidError } from '../../src/core/errors.js';\nexport const x = PackageInvalidError;\n`,
    true,
  ],
  [`src/worker/${tag}.ts`, `export { runApiProcess } from '../api/run.js';\n`, true],
  [
    `src/api/${tag}.ts`,
    `import { startWorkers } from '../../src/worker/worker.js';\nexport const x = startWorkers;\n`,
    true,
  ],
  [
    `src/cli/commands/${tag}.ts`,
    `import { runApiProcess } from '../../api/run.js';\nexport const x = runApiProcess;\n`,
    true,
  ],
];

async function layerErrors(eslint: ESLint, files: string[]): Promise<Map<string, string[]>> {
  const results = await eslint.lintFiles(files);
  return new Map(
    results.map((result) => [
      result.filePath.slice(REPO.length + 1),
      result.messages.filter((message) => message.ruleId === RULE).map((message) => message.message),
    ]),
  );
}

describe('layer rules (eslint no-restricted-imports)', () => {
  // Only the layer rule runs: the rest of the lint is `npm run lint`'s job.
  const eslint = new ESLint({ cwd: REPO, ruleFilter: ({ ruleId }) => ruleId === RULE });

  it('fire on planted imports across layers, and not on an import inside core', async () => {
    try {
      for (const [file, content] of PLANTED) {
        await mkdir(dirname(join(REPO, file)), { recursive: true });
        await writeFile(join(REPO, file), content);
      }
      const errors = await layerErrors(
        eslint,
        PLANTED.map(([file]) => join(REPO, file)),
      );
      for (const [file, , fires] of PLANTED) {
        expect(errors.get(file), file).toHaveLength(fires ? 1 : 0);
      }
      expect(errors.get(`src/core/${tag}.ts`)![0]).toMatch(
        /src\/core is the inner layer: it imports no shell/,
      );
      expect(errors.get(`sdk/src/${tag}.ts`)![0]).toMatch(/sdk\/ is published on its own/);
      expect(errors.get(`src/worker/${tag}.ts`)![0]).toMatch(/shells .* do not import each other/);
    } finally {
      for (const [file] of PLANTED) await rm(join(REPO, file), { force: true });
      await rm(join(REPO, 'src', 'core', tag), { recursive: true, force: true });
    }
  });

  it('pass on the real tree (the CLI starting the other processes through run.js is the one exception)', async () => {
    const errors = await layerErrors(eslint, [join(REPO, 'src'), join(REPO, 'sdk')]);
    expect(
      [...errors].filter(([file, messages]) => messages.length > 0 && !file.includes('__planted_')),
    ).toEqual([]);
    expect(errors.get('src/cli/commands/up.ts')).toEqual([]);
    expect(errors.get('src/cli/commands/processes.ts')).toEqual([]);
  });
});

describe('the web UI modules', () => {
  it('import no cycle (the views reach the shell through router.js, not app.js)', async () => {
    const ui = join(REPO, 'src', 'api', 'ui');
    const modules = (await readdir(ui)).filter((file) => file.endsWith('.js'));
    const imports = new Map<string, string[]>();
    for (const file of modules) {
      const source = await readFile(join(ui, file), 'utf8');
      imports.set(
        file,
        [...source.matchAll(/^(?:import|export)[^'"]*from '\.\/([^']+)';$/gm)].map((match) => match[1]!),
      );
    }
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      for (const next of imports.get(file) ?? []) visit(next, [...path, file]);
    };
    visit('app.js', []);
    expect(imports.get('app.js')).toContain('plugins.js');
    expect(cycles).toEqual([]);
  });
});
