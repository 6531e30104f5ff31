// Temp data dirs with plugin packages installed the way a user would.
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const FIXTURE_INSPECTOR_DIST = join(REPO, 'examples', 'plugins', 'fixture-inspector', 'dist');
export const NATIVE_FIXTURE_DIST = join(REPO, 'examples', 'plugins', 'native-fixture', 'dist');

export async function makeDataDir(): Promise<{ dataDir: string; cleanup: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-data-'));
  await mkdir(join(dataDir, 'plugins'));
  return { dataDir, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
}

/** Copies a built package directory into <data-dir>/plugins/<name>. */
export async function installPackage(dataDir: string, from: string, name: string): Promise<string> {
  const target = join(dataDir, 'plugins', name);
  await cp(from, target, { recursive: true });
  return target;
}

/** A project directory with the given files. */
export async function makeProject(parent: string, name: string, files: string[] = []): Promise<string> {
  const root = join(parent, name);
  await mkdir(root, { recursive: true });
  const { writeFile } = await import('node:fs/promises');
  for (const file of files) {
    await mkdir(join(root, file, '..'), { recursive: true });
    await writeFile(join(root, file), '{}\n');
  }
  return root;
}

export function uniquePrefix(name: string): string {
  return `sytest-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
