// packPlugin(): turns a TypeScript/JavaScript plugin entry file into a package
// directory: one bundled executable (shebang, mode 0755, no node_modules needed
// at run time, since the fingerprint covers only manifest and executable)
// plus its plugin.json.
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fingerprintOf } from '../fingerprint.js';
import { parseManifest } from '../manifest.js';
import type { Manifest } from '../schemas.js';

export interface PackOptions {
  /** The plugin's entry file (TypeScript or JavaScript). */
  entry: string;
  /** plugin.json to validate and copy; default: plugin.json next to the entry. */
  manifest?: string;
  /** Package directory to write; default: dist next to the entry. */
  outDir?: string;
  /** Minify the bundle (default true: smaller file, faster start). */
  minify?: boolean;
}

export interface PackResult {
  outDir: string;
  manifest: Manifest;
  executablePath: string;
  executableBytes: number;
  fingerprint: string;
}

// The bundle must run whether Node loads it as CommonJS or as an ES module
// (that depends on a package.json outside the package, which the fingerprint
// does not cover), so it is an IIFE that gets builtins from process.getBuiltinModule
// when no CommonJS `require` exists.
const BANNER = [
  '#!/usr/bin/env node',
  "var require = typeof require === 'function' ? require : (id) => process.getBuiltinModule(id);",
].join('\n');

/**
 * esbuild, loaded when a plugin is packed: a host that only speaks the
 * protocol (a packed release of Switchyard) runs without the packager.
 */
async function loadEsbuild(): Promise<typeof import('esbuild')> {
  try {
    return await import('esbuild');
  } catch {
    throw new Error('packing a plugin needs esbuild: npm install --save-dev esbuild');
  }
}

export async function packPlugin(options: PackOptions): Promise<PackResult> {
  const entry = resolve(options.entry);
  const manifestPath = resolve(options.manifest ?? join(dirname(entry), 'plugin.json'));
  const outDir = resolve(options.outDir ?? join(dirname(entry), 'dist'));
  // Name the missing input and the fix; a bare ENOENT on plugin.json blamed the manifest for a mistyped entry.
  if (!(await isFile(entry)))
    throw new Error(
      `no entry file ${entry}: give the path of the plugin's main TypeScript or JavaScript file (e.g. src/main.ts)`,
    );
  if (!(await isFile(manifestPath)))
    throw new Error(
      options.manifest
        ? `no manifest ${manifestPath}: the --manifest path must name the plugin's plugin.json`
        : `no manifest ${manifestPath}: put plugin.json next to the entry file, or pass --manifest <path>`,
    );
  const manifestBytes = await readFile(manifestPath);
  const parsed = parseManifest(manifestBytes, manifestPath);
  if (!parsed.ok) throw new Error(`invalid manifest:\n  ${parsed.errors.join('\n  ')}`);
  const manifest = parsed.manifest;

  const executablePath = join(outDir, manifest.executable);
  const { build } = await loadEsbuild();
  const bundled = await build({
    entryPoints: [entry],
    outfile: executablePath,
    bundle: true,
    platform: 'node',
    format: 'iife',
    target: 'node20',
    minify: options.minify ?? true,
    legalComments: 'none',
    banner: { js: BANNER },
    logLevel: 'silent',
    metafile: true,
    write: false,
  });
  // Nothing is written before the code is known to announce the manifest being packed.
  await refuseOtherManifests(Object.keys(bundled.metafile.inputs), manifestPath, manifestBytes);
  const code = bundled.outputFiles.find((file) => file.path === executablePath);
  if (!code) throw new Error(`esbuild wrote no ${executablePath}`);
  await mkdir(dirname(executablePath), { recursive: true, mode: 0o755 });
  await writeFile(executablePath, code.contents, { mode: 0o755 });
  await chmod(executablePath, 0o755);
  const outManifest = join(outDir, 'plugin.json');
  await writeFile(outManifest, manifestBytes, { mode: 0o644 });
  await chmod(outManifest, 0o644);
  return {
    outDir,
    manifest,
    executablePath,
    executableBytes: (await stat(executablePath)).size,
    fingerprint: await fingerprintOf(manifestBytes, executablePath),
  };
}

/**
 * The code's identity comes from the manifest it imports (serve(manifest, …)),
 * the host's from the packed plugin.json: a bundle that imports another
 * manifest would announce an identity the host refuses on every call, a
 * package that could never be enabled. Any imported JSON file that is a
 * manifest (it has `protocolVersion` and `executable`) must be the same as the
 * one packed.
 */
async function refuseOtherManifests(
  inputs: string[],
  manifestPath: string,
  manifestBytes: Buffer,
): Promise<void> {
  const packed: unknown = JSON.parse(manifestBytes.toString('utf8'));
  for (const input of inputs) {
    if (!input.endsWith('.json') || input.includes('node_modules/')) continue;
    const path = resolve(input);
    let imported: unknown;
    try {
      imported = JSON.parse(await readFile(path, 'utf8'));
    } catch {
      continue;
    }
    if (!isManifestLike(imported) || isDeepStrictEqual(imported, packed)) continue;
    const differing = Object.keys({ ...(imported as object), ...(packed as object) })
      .filter(
        (key) =>
          !isDeepStrictEqual(
            (imported as Record<string, unknown>)[key],
            (packed as Record<string, unknown>)[key],
          ),
      )
      .join(', ');
    throw new Error(
      `the code imports ${path}, which differs from the manifest being packed, ${manifestPath} (${differing}): ` +
        'the plugin would announce an identity the host refuses. Import the manifest you pack, or pack with --manifest ' +
        path,
    );
  }
}

function isManifestLike(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'protocolVersion' in value && 'executable' in value;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
