// The boundary rules of eslint.config.js (import-x/no-restricted-paths on
// resolved paths, import-x/no-cycle) fire on planted bad imports (files
// written into the tree for the test and removed after it) and pass on the
// real tree: every core room imports only the rooms below it and only through
// their index.ts, src/core imports no shell, shells import only room doors
// and not each other (the CLI only starts the others through *-process.ts),
// sdk/ never imports src/, and no import cycle. One plant per zone.
// And the web UI's modules import no cycle (views once imported app.js back).
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
// @ts-expect-error eslint.config.js is plain JavaScript without types
import { ROOMS as ROOMS_UNTYPED } from '../../eslint.config.js';

const ROOMS = ROOMS_UNTYPED as Record<string, string[]>;
const ZONES = 'import-x/no-restricted-paths';
const CYCLE = 'import-x/no-cycle';
const tag = `__planted_${process.pid}__`;

/** The import specifier from a file in room `from` to `file` (a path under src/core). */
const specifier = (from: string, file: string) => {
  const spec = relative(join('src/core', from), join('src/core', file)).replace(/\.ts$/, '.js');
  return spec.startsWith('.') ? spec : `./${spec}`;
};

/** A module of the room other than its door (for an import that skips the door). */
async function insideOf(room: string): Promise<string> {
  const files = (await readdir(join(REPO, 'src/core', room))).filter(
    (file) => file.endsWith('.ts') && file !== 'index.ts' && !file.includes('__planted_'),
  );
  return `${room}/${files.sort()[0]}`;
}

/** [file relative to the repository, its content, the messages the boundary rules must give (none: must pass)] */
async function planted(): Promise<[string, string, RegExp[]][]> {
  const rooms = Object.keys(ROOMS);
  const plants: [string, string, RegExp[]][] = [];
  for (const [room, below] of Object.entries(ROOMS)) {
    const above = rooms.filter((other) => other !== room && !below.includes(other));
    // A room above: forbidden even through its door.
    if (above.length > 0)
      plants.push([
        `src/core/${room}/${tag}-up.ts`,
        `export * from '${specifier(room, `${above[0]}/index.ts`)}';\n`,
        [new RegExp(`the ${room} room imports only`)],
      ]);
    // A room below, skipping its door (a dynamic import is covered too).
    if (below.length > 0) {
      plants.push([
        `src/core/${room}/${tag}-inside.ts`,
        `export const x = () => import('${specifier(room, await insideOf(below[0]!))}');\n`,
        [/through its door only/],
      ]);
      plants.push([
        `src/core/${room}/${tag}-fine.ts`,
        `export * from '${specifier(room, `${below[0]}/index.ts`)}';\n`,
        [],
      ]);
    }
  }
  plants.push(
    [
      `src/core/platform/${tag}.ts`,
      `import { globalsOf } from '../../cli/command-context.js';\nexport const x = globalsOf;\n`,
      [/src\/core imports no shell/],
    ],
    [
      `src/core/runtime/${tag}-deeper.ts`,
      `import type { FastifyInstance } from 'fastify';\nimport type { buildApi } from '../../api/server.js';\nexport type X = typeof buildApi | FastifyInstance;\n`,
      [/src\/core imports no shell/],
    ],
    [
      `src/core/platform/${tag}-sibling.ts`,
      `import { PackageInvalidError } from './errors.js';\nexport const x = PackageInvalidError;\n`,
      [],
    ],
    [
      `sdk/src/${tag}.ts`,
      `import { PackageInvalidError } from '../../src/core/platform/index.js';\nexport const x = PackageInvalidError;\n`,
      [/sdk\/ is published on its own/],
    ],
    [
      `src/worker/${tag}.ts`,
      `export { runApiProcess } from '../api/api-process.js';\n`,
      [/shells .* do not import each other/],
    ],
    [
      `src/api/${tag}.ts`,
      `import { startWorkers } from '../../src/worker/worker.js';\nexport const x = startWorkers;\n`,
      [/shells .* do not import each other/],
    ],
    [
      `src/cli/commands/${tag}.ts`,
      `import { runApiProcess } from '../../api/api-process.js';\nexport const x = runApiProcess;\n`,
      [/shells .* do not import each other/],
    ],
    [
      `src/api/${tag}-inside.ts`,
      `import { keysFor } from '../core/redis/keys.js';\nexport const x = keysFor;\n`,
      [/a shell imports a core room through its door only/],
    ],
    [
      `src/api/${tag}-door.ts`,
      `import { keysFor } from '../core/redis/index.js';\nexport const x = keysFor;\n`,
      [],
    ],
  );
  return plants;
}

async function boundaryErrors(
  eslint: ESLint,
  files: string[],
  rule: string = ZONES,
): Promise<Map<string, string[]>> {
  const results = await eslint.lintFiles(files);
  return new Map(
    results.map((result) => [
      result.filePath.slice(REPO.length + 1),
      result.messages.filter((message) => message.ruleId === rule).map((message) => message.message),
    ]),
  );
}

describe('boundary rules (eslint import-x/no-restricted-paths, import-x/no-cycle)', () => {
  // Only the boundary rules run: the rest of the lint is `npm run lint`'s job. They need no
  // type information, so the type-aware parsing of src/ (the promise rules) is off here.
  const eslint = new ESLint({
    cwd: REPO,
    ruleFilter: ({ ruleId }) => ruleId === ZONES || ruleId === CYCLE,
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });

  it('fire on a planted import for every zone, and not on imports that keep the rules', async () => {
    const plants = await planted();
    try {
      for (const [file, content] of plants) {
        await mkdir(dirname(join(REPO, file)), { recursive: true });
        await writeFile(join(REPO, file), content);
      }
      const errors = await boundaryErrors(
        eslint,
        plants.map(([file]) => join(REPO, file)),
      );
      for (const [file, , expected] of plants) {
        const messages = errors.get(file) ?? [];
        expect(messages, file).toHaveLength(expected.length);
        expected.forEach((pattern, index) => expect(messages[index], file).toMatch(pattern));
      }
      // Every room above the lowest is planted an upward import; every room with rooms below, a door skip.
      const rooms = Object.keys(ROOMS).length;
      expect(plants.filter(([file]) => file.endsWith('-up.ts')).length).toBe(rooms - 1);
      expect(plants.filter(([file]) => file.endsWith('-inside.ts')).length).toBe(rooms - 1 + 1);
    } finally {
      for (const [file] of plants) await rm(join(REPO, file), { force: true });
    }
  });

  it('fire on a planted import cycle', async () => {
    const a = `src/core/platform/${tag}-cycle-a.ts`;
    const b = `src/core/platform/${tag}-cycle-b.ts`;
    try {
      await writeFile(join(REPO, a), `import { b } from './${tag}-cycle-b.js';\nexport const a = () => b;\n`);
      await writeFile(join(REPO, b), `import { a } from './${tag}-cycle-a.js';\nexport const b = () => a;\n`);
      const errors = await boundaryErrors(eslint, [join(REPO, a)], CYCLE);
      expect(errors.get(a)).toEqual(['Dependency cycle detected']);
    } finally {
      await rm(join(REPO, a), { force: true });
      await rm(join(REPO, b), { force: true });
    }
  });

  it('pass on the real tree (the CLI starting the other processes through *-process.ts is the one exception)', async () => {
    const errors = await boundaryErrors(eslint, [join(REPO, 'src'), join(REPO, 'sdk')]);
    expect(
      [...errors].filter(([file, messages]) => messages.length > 0 && !file.includes('__planted_')),
    ).toEqual([]);
    const cycles = await boundaryErrors(eslint, [join(REPO, 'src')], CYCLE);
    expect([...cycles].filter(([, messages]) => messages.length > 0)).toEqual([]);
    expect(errors.get('src/cli/commands/up-command.ts')).toEqual([]);
    expect(errors.get('src/cli/commands/processes.ts')).toEqual([]);
  });

  it('leave no module directly in src/core: every module lives in a room with a door, and file names are unique in src/', async () => {
    const top = (await readdir(join(REPO, 'src/core'))).filter((file) => /\.(ts|js)$/.test(file));
    expect(top.filter((file) => file !== 'index.ts')).toEqual([]);
    for (const room of Object.keys(ROOMS))
      expect((await readdir(join(REPO, 'src/core', room))).includes('index.ts'), room).toBe(true);
    const names = new Map<string, string[]>();
    const walk = async (dir: string) => {
      for (const entry of await readdir(join(REPO, dir), { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) await walk(path);
        else if (
          /\.(ts|js|lua)$/.test(entry.name) &&
          entry.name !== 'index.ts' &&
          !entry.name.includes('__planted_')
        )
          names.set(entry.name, [...(names.get(entry.name) ?? []), path]);
      }
    };
    await walk('src');
    expect([...names].filter(([, paths]) => paths.length > 1)).toEqual([]);
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
