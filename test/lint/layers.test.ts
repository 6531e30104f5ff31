// The boundary rules of eslint.config.js (import-x/no-restricted-paths on
// resolved paths, import-x/no-cycle) fire on planted bad imports (files
// written into a temporary copy of the tree, never into src/, which other test
// files read while this one runs) and pass on the real tree: every core room imports only the rooms below it and only through
// their index.ts, src/core imports no shell, shells import only room doors
// and not each other (the CLI only starts the others through *-process.ts),
// sdk/ never imports src/, and no import cycle. One plant per zone.
// And the web UI's modules import no cycle (views once imported app.js back).
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
// @ts-expect-error eslint.config.js is plain JavaScript without types
import { ROOMS as ROOMS_UNTYPED } from '../../eslint.config.js';

const ROOMS = ROOMS_UNTYPED as Record<string, string[]>;
const ZONES = 'import-x/no-restricted-paths';
const CYCLE = 'import-x/no-cycle';
const tag = '__planted__';

/**
 * A copy of what the boundary rules read (the eslint config, the tsconfigs the resolver
 * follows, src/ and sdk/ without builds), node_modules linked: the plants go there.
 */
async function copyOfTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'switchyard-layers-'));
  for (const file of ['eslint.config.js', 'package.json', 'tsconfig.base.json', 'tsconfig.json'])
    await cp(join(REPO, file), join(root, file));
  const noBuilds = (source: string) => !/[/\\](dist|node_modules)$/.test(source);
  for (const dir of ['src', 'sdk'])
    await cp(join(REPO, dir), join(root, dir), { recursive: true, filter: noBuilds });
  await symlink(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  return root;
}

/** The import specifier from a file in room `from` to `file` (a path under src/core). */
const specifier = (from: string, file: string) => {
  const spec = relative(join('src/core', from), join('src/core', file)).replace(/\.ts$/, '.js');
  return spec.startsWith('.') ? spec : `./${spec}`;
};

/** A module of the room other than its door (for an import that skips the door). */
async function insideOf(room: string): Promise<string> {
  const files = (await readdir(join(REPO, 'src/core', room))).filter(
    (file) => file.endsWith('.ts') && file !== 'index.ts',
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

/** Only the boundary rules run, from the tree at `root`: the rest of the lint is `npm run lint`'s job. */
const boundaryLinter = (root: string) =>
  // They need no type information, so the type-aware parsing of src/ (the promise rules) is off.
  new ESLint({
    cwd: root,
    ruleFilter: ({ ruleId }) => ruleId === ZONES || ruleId === CYCLE,
    // The root named: a parser that has seen two trees' configs in one process will not guess it.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false, tsconfigRootDir: root } } },
  });

/** The messages of `rule` per file of the tree at `root` (the keys relative to it). */
async function boundaryErrors(
  root: string,
  files: string[],
  rule: string = ZONES,
): Promise<Map<string, string[]>> {
  // The zones' paths (no-restricted-paths' basePath) and the resolver's tsconfig paths are
  // relative to the process's directory, not to ESLint's cwd: lint from inside the tree.
  const before = process.cwd();
  process.chdir(root);
  let results: ESLint.LintResult[];
  try {
    results = await boundaryLinter(root).lintFiles(files.map((file) => join(root, file)));
  } finally {
    process.chdir(before);
  }
  return new Map(
    results.map((result) => [
      relative(root, result.filePath),
      // A file that does not parse (ruleId null) says so rather than passing with no message.
      result.messages
        .filter((message) => message.ruleId === rule || message.fatal)
        .map((message) => message.message),
    ]),
  );
}

describe('boundary rules (eslint import-x/no-restricted-paths, import-x/no-cycle)', () => {
  let tree: string;
  beforeAll(async () => {
    tree = await copyOfTree();
  });
  afterAll(() => rm(tree, { recursive: true, force: true }));

  it('fire on a planted import for every zone, and not on imports that keep the rules', async () => {
    const plants = await planted();
    for (const [file, content] of plants) {
      await mkdir(dirname(join(tree, file)), { recursive: true });
      await writeFile(join(tree, file), content);
    }
    const errors = await boundaryErrors(
      tree,
      plants.map(([file]) => file),
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
  });

  it('fire on a planted import cycle', async () => {
    const a = `src/core/platform/${tag}-cycle-a.ts`;
    const b = `src/core/platform/${tag}-cycle-b.ts`;
    await writeFile(join(tree, a), `import { b } from './${tag}-cycle-b.js';\nexport const a = () => b;\n`);
    await writeFile(join(tree, b), `import { a } from './${tag}-cycle-a.js';\nexport const b = () => a;\n`);
    const errors = await boundaryErrors(tree, [a], CYCLE);
    expect(errors.get(a)).toEqual(['Dependency cycle detected']);
  });

  it('pass on the real tree (the CLI starting the other processes through *-process.ts is the one exception)', async () => {
    const errors = await boundaryErrors(REPO, ['src', 'sdk']);
    expect([...errors].filter(([, messages]) => messages.length > 0)).toEqual([]);
    const cycles = await boundaryErrors(REPO, ['src'], CYCLE);
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
        else if (/\.(ts|js|lua)$/.test(entry.name) && entry.name !== 'index.ts')
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
