// One list of the SWITCHYARD_* environment variables, kept true: the table in
// src/core/platform/environment.ts names every one the repository mentions
// (code, tests, CI, compose, docs), each row's files really mention it,
// docs/ENVIRONMENT.md shows exactly that table, and src/ reads them only
// through readEnv() (the two rooms that cannot import platform excepted).
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/core/platform/index.js';
import { REPO } from '../support/data-dir.js';
import { filesUnder, readRepoFile } from '../support/repo-files.js';

const NAME = /\bSWITCHYARD_[A-Z0-9_]+\b/g;
/** Identifiers that look like a variable but are not one. */
const NOT_VARIABLES = new Set(['SWITCHYARD_SERVICES']); // a constant in test/deploy/compose.test.ts
/** Where the repository mentions environment variables. */
const SEARCHED = ['src', 'sdk/src', 'bench', 'test', 'scripts', '.ci', 'examples', 'docs', 'native'];
const SEARCHED_FILES = ['README.md', 'Dockerfile', 'docker-compose.yml', 'package.json'];
/** src/ files that read a variable without readEnv(), and why they may. */
const DIRECT_READERS: Record<string, string> = {
  'src/core/safety/redact.ts': 'the safety room is below platform and imports no other room',
};
const START = '<!-- environment table: start -->';
const END = '<!-- environment table: end -->';
/** Where the table is written when the page differs, ready to paste. */
const EXPECTED_TABLE = join(REPO, 'test-artifacts', 'ENVIRONMENT.table.md');

/** The markdown table docs/ENVIRONMENT.md must hold between its markers. */
function environmentTable(): string {
  const rows = Object.entries(ENVIRONMENT).map(
    ([name, variable]) =>
      `| \`${name}\` | ${variable.meaning} | ${variable.default} | ${variable.usedBy.map((path) => `\`${path}\``).join(', ')} |`,
  );
  return ['| variable | what it sets | when unset | read or set by |', '|---|---|---|---|', ...rows].join(
    '\n',
  );
}

async function mentions(): Promise<Map<string, Set<string>>> {
  const files = [...(await Promise.all(SEARCHED.map(filesUnder))).flat(), ...SEARCHED_FILES];
  const byName = new Map<string, Set<string>>();
  for (const file of files) {
    if (file === 'src/core/platform/environment.ts' || file === 'docs/ENVIRONMENT.md') continue;
    const text = await readRepoFile(file).catch(() => '');
    for (const [name] of text.matchAll(NAME)) {
      if (NOT_VARIABLES.has(name)) continue;
      if (!byName.has(name)) byName.set(name, new Set());
      byName.get(name)!.add(file);
    }
  }
  return byName;
}

describe('SWITCHYARD_* environment variables', () => {
  it('every one the repository mentions has a row, and every row is mentioned', async () => {
    const found = await mentions();
    const listed = Object.keys(ENVIRONMENT);
    const unlisted = [...found.keys()].filter((name) => !listed.includes(name));
    expect(
      unlisted.map((name) => `${name} (in ${[...found.get(name)!].join(', ')})`),
      'add a row to ENVIRONMENT in src/core/platform/environment.ts',
    ).toEqual([]);
    expect(
      listed.filter((name) => !found.has(name)),
      'no file mentions these any more: remove their rows',
    ).toEqual([]);
  });

  it("each row's files exist and mention it", async () => {
    const wrong: string[] = [];
    for (const [name, variable] of Object.entries(ENVIRONMENT)) {
      for (const path of variable.usedBy) {
        if (!existsSync(join(REPO, path))) wrong.push(`${name}: ${path} does not exist`);
        else if (!(await readRepoFile(path)).includes(name))
          wrong.push(`${name}: ${path} does not mention it`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('docs/ENVIRONMENT.md shows the table of environment.ts', async () => {
    const doc = await readRepoFile('docs/ENVIRONMENT.md');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start >= 0 && end > start, `docs/ENVIRONMENT.md marks its table with ${START} … ${END}`).toBe(
      true,
    );
    const expected = environmentTable();
    const shown = doc.slice(start + START.length, end).trim();
    if (shown !== expected) {
      await mkdir(dirname(EXPECTED_TABLE), { recursive: true });
      await writeFile(EXPECTED_TABLE, `${expected}\n`);
    }
    expect(
      shown,
      `docs/ENVIRONMENT.md differs from src/core/platform/environment.ts: paste ${relative(REPO, EXPECTED_TABLE)} between its markers`,
    ).toBe(expected);
  });

  it('src/ reads them through readEnv() only', async () => {
    const direct = /\benv(?:\.|\[\s*['"`])SWITCHYARD_[A-Z0-9_]+\b(?!\s*=[^=])/;
    const offenders: string[] = [];
    for (const file of await filesUnder('src')) {
      if (!file.endsWith('.ts') || file === 'src/core/platform/environment.ts' || DIRECT_READERS[file])
        continue;
      const lines = (await readRepoFile(file)).split('\n');
      lines.forEach((line, index) => {
        if (direct.test(line)) offenders.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offenders, "read it with readEnv('SWITCHYARD_…') from the platform room").toEqual([]);
  });
});
