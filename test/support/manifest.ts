// The plugin packages tests write: a minimal valid manifest (one inspect
// capability, metadata scope, executable `run`; `extra` adds or overrides
// fields), and a package directory made of an executable and its plugin.json.
import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const manifestFields = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  schemaVersion: 'switchyard.plugin-manifest/v1',
  id,
  name: `Plugin ${id}`,
  version: '1.0.0',
  protocolVersion: 'switchyard.plugin/v1',
  executable: 'run',
  capabilities: ['project.inspect'],
  requestedScopes: ['project.metadata.read'],
  ...extra,
});

/** The same as the text of a plugin.json. */
export const testManifest = (id: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify(manifestFields(id, extra));

/** <dir>/<executable> (0755, made by `write`) and, given its text, <dir>/plugin.json (0644). */
async function writePackageFiles(
  dir: string,
  executable: string,
  write: (path: string) => Promise<void>,
  manifestText?: string,
): Promise<string> {
  const path = join(dir, executable);
  await mkdir(dirname(path), { recursive: true });
  if (manifestText !== undefined) await writeFile(join(dir, 'plugin.json'), manifestText, { mode: 0o644 });
  await write(path);
  await chmod(path, 0o755);
  return dir;
}

/**
 * <pluginsDir>/<dir> with a shell script as its executable `run` (by default
 * one that exits 0) and plugin.json with the text given; without it, none.
 */
export function writeScriptPackage(
  pluginsDir: string,
  dir: string,
  manifestText?: string,
  script = '#!/bin/sh\nexit 0\n',
): Promise<string> {
  return writePackageFiles(join(pluginsDir, dir), 'run', (path) => writeFile(path, script), manifestText);
}

/**
 * <dir> with a copy of a fixture plugin as its executable and a plugin.json
 * holding every required field plus `fields` (which name the executable).
 */
export function installFixturePackage(
  dir: string,
  fixture: string,
  fields: { id: string; executable: string } & Record<string, unknown>,
): Promise<string> {
  const manifest = manifestFields(fields.id, fields);
  return writePackageFiles(
    dir,
    fields.executable,
    (path) => copyFile(fixture, path),
    `${JSON.stringify(manifest, null, 2)}\n`,
  );
}
