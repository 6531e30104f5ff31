// Every file a comment or a doc names is a file of the repository: a comment
// or a page that points to a moved or removed file misleads the next reader.
//
// What is read: the comments (`//`, `/* … */`; `--` in Lua) of the code under
// src/, test/, bench/, native/, sdk/ and scripts/, and the whole text of the
// Markdown pages at the root and under docs/.
// What counts as a file name there (the rule, kept narrow so that a plugin's
// own `index.ts` in an example or a user's file in a doc is not taken for one):
// - a rooted path: starts with one of the repository's top folders (`src/`,
//   `test/`, `bench/`, `native/`, `docs/`, `sdk/`, `examples/`, `scripts/`,
//   `types/`) and ends in a file extension or a `/` (a folder). It resolves
//   when that path exists from the root; a `.js` path also when its `.ts`
//   source does (imports name the built file). Paths with a placeholder
//   (`<area>`, `*`, `…`, `{`, `NNNN`) are patterns, not names: skipped.
// - a bare name of a source file (a word ending in `.ts`, `.mjs`, `.c`, `.h`
//   or `.lua`, not after a `<…>` or `*`): it resolves when some file of the
//   repository has that name. A system header is written `<sched.h>`.
// The runs of docs/benchmarks/ are a record of the tree as it was: not read.
// This file is not read either (it plants wrong names).
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { filesUnder, readRepoFile } from '../support/repo-files.js';

const TOP = ['src', 'test', 'bench', 'native', 'docs', 'sdk', 'examples', 'scripts', 'types'];
const ROOTED = new RegExp(`(?<![\\w./@~-])((?:${TOP.join('|')})/[\\w./<>*{}…-]*)`, 'g');
const BARE = /(?<![\w./@~<>*-])([\w-]+\.(?:ts|mjs|c|h|lua))(?![\w/-])/g;
const PLACEHOLDER = /[<>*{}…]|NNNN/;
const CODE = /\.(ts|js|mjs|c|h|lua)$/;
const SELF = 'test/lint/file-references.test.ts';

/** The comment text of a code file (string contents that look like comments are rare enough to read too). */
export function commentsOf(file: string, text: string): string {
  const found: string[] = [];
  const line = file.endsWith('.lua') ? /(?:^|\s)--(.*)$/gm : /(?:^|[\s;,)])\/\/(.*)$/gm;
  for (const [, comment] of text.matchAll(line)) found.push(comment!);
  if (!file.endsWith('.lua')) for (const [block] of text.matchAll(/\/\*[\s\S]*?\*\//g)) found.push(block);
  return found.join('\n');
}

/** The file names in `text` that name no file, given the repository's files and their base names. */
export function unresolved(text: string, exists: (path: string) => boolean, names: Set<string>): string[] {
  const missing: string[] = [];
  for (const [, raw] of text.matchAll(ROOTED)) {
    const path = raw!.replace(/[.,:;)]+$/, '');
    if (PLACEHOLDER.test(path)) continue;
    if (!path.endsWith('/') && !/\.\w+$/.test(path)) continue;
    if (exists(path) || (path.endsWith('.js') && exists(path.replace(/\.js$/, '.ts')))) continue;
    missing.push(path);
  }
  for (const [, name] of text.matchAll(BARE)) if (!names.has(name!)) missing.push(name!);
  return missing;
}

async function sources(): Promise<{ file: string; text: string }[]> {
  const found: { file: string; text: string }[] = [];
  for (const dir of ['src', 'test', 'bench', 'native', 'sdk', 'scripts'])
    for (const file of await filesUnder(dir))
      if (CODE.test(file) && file !== SELF)
        found.push({ file, text: commentsOf(file, await readRepoFile(file)) });
  const pages = [
    ...(await filesUnder('.')).filter((file) => !file.includes('/') && file.endsWith('.md')),
    ...(await filesUnder('docs')).filter(
      (file) => file.endsWith('.md') && !file.startsWith('docs/benchmarks/'),
    ),
  ];
  for (const file of pages) found.push({ file, text: await readRepoFile(file) });
  return found;
}

describe('file names in comments and docs', () => {
  const exists = (path: string) => existsSync(join(REPO, path));

  it('flag a planted wrong name, rooted or bare, and pass the right ones', () => {
    const names = new Set(['route-kit.ts', 'spawner.c']);
    const comment = commentsOf(
      'src/x.ts',
      [
        "const a = 'src/nowhere.ts'; // see src/api/route-kit.ts and src/core/spawner.ts,",
        '/* also batch-control.ts, spawner.c, src/api/routes/<area>-routes.ts and src/core/ */',
      ].join('\n'),
    );
    expect(unresolved(comment, exists, names)).toEqual(['src/core/spawner.ts', 'batch-control.ts']);
  });

  it('every one names a file of the repository', async () => {
    const names = new Set((await filesUnder('.')).map((file) => basename(file)));
    const missing: string[] = [];
    for (const { file, text } of await sources())
      for (const name of unresolved(text, exists, names)) missing.push(`${file}: ${name}`);
    expect(missing, 'name the file where it is now (or write the reason without a file name)').toEqual([]);
  });

  it('every relative Markdown link, the runs of docs/benchmarks/ included, leads to a file', async () => {
    const pages = (await filesUnder('.')).filter(
      (file) => file.endsWith('.md') && !file.startsWith('test/fixtures/'),
    );
    const broken: string[] = [];
    for (const page of pages)
      for (const [, target] of (await readRepoFile(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const path = target!.split('#')[0]!;
        if (path === '' || /^[a-z]+:/i.test(path)) continue;
        if (!exists(join(dirname(page), path))) broken.push(`${page}: ${target}`);
      }
    expect(broken, 'these links lead nowhere').toEqual([]);
  });
});
