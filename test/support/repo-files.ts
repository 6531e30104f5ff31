// The repository's own files, walked on disk (so a file not yet added to git
// counts too), for the tests that keep docs and conventions true to the tree.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { REPO } from './data-dir.js';

/** Directories that hold no file of ours: installs, builds, test and coverage output. */
const SKIPPED = new Set(['node_modules', 'dist', '.git', 'test-artifacts', 'coverage']);

/** Every file under `dir` (a path from the repository root), as paths from the root, sorted. */
export async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (absolute: string): Promise<void> => {
    for (const entry of await readdir(absolute, { withFileTypes: true })) {
      const path = join(absolute, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !entry.name.startsWith('.switchyard')) await walk(path);
      } else if (entry.isFile()) found.push(relative(REPO, path));
    }
  };
  await walk(join(REPO, dir));
  return found.sort();
}

/** The text of a file given by its path from the repository root. */
export function readRepoFile(path: string): Promise<string> {
  return readFile(join(REPO, path), 'utf8');
}
