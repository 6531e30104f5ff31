// docs/ARCHITECTURE.md lists every file of src/ in its per-room tables, one
// row each ("| `src/…` | what it does |"), and no row names a file that is
// gone: a new, moved or removed file must be written into the page.
import { describe, expect, it } from 'vitest';
import { filesUnder, readRepoFile } from '../support/repo-files.js';

const ROW = /^\|\s*`(src\/[^`]+)`\s*\|\s*(.*?)\s*\|\s*$/gm;

describe('docs/ARCHITECTURE.md names every file of src/', () => {
  it('one row per file, each with what it does, and none for a file that is gone', async () => {
    const doc = await readRepoFile('docs/ARCHITECTURE.md');
    const rows = new Map<string, string>();
    const twice: string[] = [];
    for (const [, path, what] of doc.matchAll(ROW)) {
      if (rows.has(path!)) twice.push(path!);
      rows.set(path!, what!);
    }
    const files = await filesUnder('src');
    expect(
      files.filter((file) => !rows.has(file)),
      'add a row "| `<path>` | what it does |" to the room\'s table in docs/ARCHITECTURE.md',
    ).toEqual([]);
    expect(
      [...rows.keys()].filter((path) => !files.includes(path)),
      'these rows of docs/ARCHITECTURE.md name no file: remove or rename them',
    ).toEqual([]);
    expect(twice, 'rows listed twice').toEqual([]);
    expect(
      [...rows].filter(([, what]) => what === '').map(([path]) => path),
      'rows without a description',
    ).toEqual([]);
  });
});
