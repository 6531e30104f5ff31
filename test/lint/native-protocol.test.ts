// The host ↔ sy-spawner protocol has one table (native/protocol.json): native/protocol.mjs
// writes native/protocol.h and src/core/supervision/native-protocol.ts from it. Caught here:
// a generated file that is not what the table makes (edited by hand, or the table changed
// and the files not written again), and a constant of the table still defined by hand in
// the helper's C or the host's TypeScript.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { filesUnder, readRepoFile } from '../support/repo-files.js';

const run = promisify(execFile);
const GENERATOR = 'native/protocol.mjs';
const TABLE = 'native/protocol.json';
const GENERATED_C = 'native/protocol.h';
const GENERATED_TS = 'src/core/supervision/native-protocol.ts';

interface Named {
  name: string;
}
interface Table {
  hostFrames: Named[];
  helperFrames: Named[];
  spawnFlags: Named[];
  limits: Named[];
  helperExits: Named[];
}

/** `node native/protocol.mjs --check` in `root`: its exit code and what it said. */
async function check(root: string): Promise<{ code: number; said: string }> {
  try {
    const { stderr } = await run(process.execPath, [join(root, GENERATOR), '--check']);
    return { code: 0, said: stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, said: failed.stderr };
  }
}

/** The C names the table defines (protocol.h). */
async function cNames(): Promise<string[]> {
  const table = JSON.parse(await readRepoFile(TABLE)) as Table;
  return [
    'FRAME_HEADER',
    'MAX_FRAME',
    ...table.hostFrames.map((entry) => `H_${entry.name}`),
    ...table.helperFrames.map((entry) => `S_${entry.name}`),
    ...table.spawnFlags.map((entry) => `SPAWN_${entry.name}`),
    ...table.limits.map((entry) => `LIMIT_${entry.name}`),
    ...table.helperExits.map((entry) => `EXIT_${entry.name}`),
  ];
}

describe('the native protocol table', () => {
  it('the generated files are what the table makes', async () => {
    const { code, said } = await check(REPO);
    expect(said, 'run node native/protocol.mjs (npm run build does), and never edit its outputs').toBe('');
    expect(code).toBe(0);
  });

  it('the check names a generated file edited by hand', async () => {
    const root = await mkdtemp(join(tmpdir(), 'sy-protocol-'));
    try {
      // The generator and its table alone: it writes both files there, then checks them.
      for (const file of [GENERATOR, TABLE]) {
        await mkdir(dirname(join(root, file)), { recursive: true });
        await cp(join(REPO, file), join(root, file));
      }
      await mkdir(dirname(join(root, GENERATED_TS)), { recursive: true });
      await run(process.execPath, [join(root, GENERATOR)]);
      expect((await check(root)).code).toBe(0);
      const header = await readFile(join(root, GENERATED_C), 'utf8');
      await writeFile(join(root, GENERATED_C), header.replace('H_KILL = 4', 'H_KILL = 7'));
      const { code, said } = await check(root);
      expect(code).toBe(1);
      expect(said).toContain(`${GENERATED_C} is not what ${TABLE} makes`);
      expect(said).not.toContain(GENERATED_TS);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("no C file defines one of the table's constants by hand", async () => {
    const names = await cNames();
    const definition = new RegExp(`(#define\\s+(${names.join('|')})\\b|\\b(${names.join('|')})\\s*=[^=])`);
    const found: string[] = [];
    for (const file of await filesUnder('native'))
      if (/\.[ch]$/.test(file) && file !== GENERATED_C) {
        const lines = (await readRepoFile(file)).split('\n');
        lines.forEach((line, at) => {
          if (definition.test(line)) found.push(`${file}:${at + 1}: ${line.trim()}`);
        });
      }
    expect(found, `these belong in ${TABLE}`).toEqual([]);
  });

  it("no TypeScript of src/ defines one of the table's constants by hand", async () => {
    const names = [...(await cNames()), 'H', 'S', 'HEADER', 'LIMIT_NAMES', 'HELPER_EXITS'];
    const definition = new RegExp(`\\b(?:const|let|var)\\s+(?:${names.join('|')})\\s*[:=]`);
    const found: string[] = [];
    for (const file of await filesUnder('src'))
      if (file.endsWith('.ts') && file !== GENERATED_TS) {
        const lines = (await readRepoFile(file)).split('\n');
        lines.forEach((line, at) => {
          if (definition.test(line)) found.push(`${file}:${at + 1}: ${line.trim()}`);
        });
      }
    expect(found, `these belong in ${TABLE}`).toEqual([]);
  });
});
