// Discovery (docs/PROTOCOL.md §1–4): a deterministic scan of
// <data-dir>/plugins/*/plugin.json that never executes anything. A broken
// package is reported with its own error; the others are still discovered.
// It never blocks either: a FIFO, socket or device where a package file should
// be is refused with its own error, before anything is read from it.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MAX_MANIFEST_BYTES,
  PLUGIN_ID_PATTERN,
  parseManifest,
  type Manifest,
} from '@switchyard/plugin-sdk/protocol';
import { checkExecutable, PackageFileError, readManifestBytes } from '@switchyard/plugin-sdk/host';
import { PackageInvalidError } from '../platform/index.js';
import { redact } from '../safety/index.js';
import { hashExecutable } from './fingerprint.js';
import { MAX_PACKAGES, readPackageTree, type PackageEntry } from './package-tree.js';

export { MAX_PACKAGES };

export interface DiscoveredPackage {
  /** The manifest's id, or the directory name when the manifest has no usable id. */
  id: string;
  packageDir: string;
  manifestPath: string;
  manifest?: Manifest;
  /** What an invalid manifest still says about itself, for listing it. */
  hints?: { name?: string | undefined; version?: string | undefined; protocolVersion?: string | undefined };
  fingerprint?: string;
  /** The whole package (package-tree.ts): its digest and every entry, as the review shows them. */
  tree?: { digest: string; entries: PackageEntry[] };
  /** Why the package cannot be used; absent when it can. */
  error?: string;
  protocolMismatch: boolean;
}

export class DiscoveryError extends PackageInvalidError {}

/**
 * `reviewedOf`: for a package already trusted, the paths of its trusted listing (by package
 * directory), so what was added since neither counts toward its bounds nor refuses it when it
 * changes while read (readPackageTree).
 */
export async function discoverPackages(
  pluginsDir: string,
  reviewedOf: (packageDir: string) => ReadonlySet<string> | undefined = () => undefined,
): Promise<DiscoveredPackage[]> {
  let entries;
  try {
    entries = await readdir(pluginsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new DiscoveryError(`cannot read the plugins directory ${pluginsDir}: ${(error as Error).message}`);
  }
  const directories = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  directories.sort();
  // Counted from directory entries alone, so too many is refused before any file is read or hashed.
  const count = await countPackages(pluginsDir, directories);
  if (count > MAX_PACKAGES) {
    throw new DiscoveryError(
      `${pluginsDir} holds ${count} plugin packages; at most ${MAX_PACKAGES} are allowed (remove some)`,
    );
  }
  const packages: DiscoveredPackage[] = [];
  for (const name of directories) {
    const found = await readPackage(join(pluginsDir, name), name, reviewedOf(join(pluginsDir, name)));
    if (found) packages.push(found);
  }
  markDuplicates(packages);
  return packages.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.packageDir < b.packageDir ? -1 : 1));
}

/** Reads one package; undefined when the directory has no plugin.json (ignored). */
export async function readPackage(
  packageDir: string,
  dirName: string,
  reviewed?: ReadonlySet<string>,
): Promise<DiscoveredPackage | undefined> {
  const manifestPath = join(packageDir, 'plugin.json');
  const base = { packageDir, manifestPath, protocolMismatch: false };
  let bytes;
  try {
    bytes = await readManifestBytes(manifestPath);
  } catch (error) {
    if (!(error instanceof PackageFileError)) throw error;
    return { ...base, id: dirName, error: error.message };
  }
  if (bytes === undefined) return undefined;
  if (bytes.length > MAX_MANIFEST_BYTES) {
    return { ...base, id: dirName, error: `${manifestPath}: larger than ${MAX_MANIFEST_BYTES} bytes` };
  }
  const parsed = parseManifest(bytes, manifestPath);
  if (!parsed.ok) {
    const hints = readHints(bytes);
    return {
      ...base,
      id: hints.id ?? dirName,
      hints,
      error: parsed.errors.map(quotedSafely).join('; '),
      protocolMismatch: parsed.protocolMismatch,
    };
  }
  const manifest = parsed.manifest;
  const executable = await checkExecutable(packageDir, manifest.executable);
  if (!executable.ok) return { ...base, ...refused(manifest, executable.error) };
  const fingerprint = await hashExecutable(bytes, executable.path);
  if (typeof fingerprint !== 'string') return { ...base, ...refused(manifest, fingerprint.error) };
  const tree = await readPackageTree(packageDir, reviewed ? { reviewed } : {});
  if (!tree.ok) return { ...base, ...refused(manifest, tree.error), fingerprint };
  const { digest, entries } = tree.tree;
  return { ...base, id: manifest.id, manifest, fingerprint, tree: { digest, entries } };
}

/**
 * A package whose manifest is valid but whose files are refused: it is listed
 * with its error, and neither quotes the manifest raw (PROTOCOL §10): its name,
 * version, executable and arguments, and the executable in the error, are
 * redacted and cut to 120 characters.
 */
function refused(manifest: Manifest, error: string): Pick<DiscoveredPackage, 'id' | 'manifest' | 'error'> {
  const executable = shown(manifest.executable);
  return {
    id: manifest.id,
    manifest: {
      ...manifest,
      name: shown(manifest.name),
      version: shown(manifest.version),
      executable,
      ...(manifest.arguments ? { arguments: manifest.arguments.map(shown) } : {}),
    },
    error: quotedSafely(
      executable === manifest.executable ? error : error.split(manifest.executable).join(executable),
    ),
  };
}

/** Package directories: those with a plugin.json entry of any type (lstat only: nothing is opened). */
async function countPackages(pluginsDir: string, directories: string[]): Promise<number> {
  let count = 0;
  for (const name of directories) {
    const present = await lstat(join(pluginsDir, name, 'plugin.json')).then(
      () => true,
      () => false,
    );
    if (present) count += 1;
  }
  return count;
}

/** A broken manifest may still name itself; its id keeps duplicates detectable. */
function readHints(bytes: Buffer): {
  id?: string;
  name?: string | undefined;
  version?: string | undefined;
  protocolVersion?: string | undefined;
} {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
  if (typeof value !== 'object' || value === null) return {};
  const text = (field: string) =>
    typeof value[field] === 'string' ? shown(value[field] as string) : undefined;
  const id = text('id');
  return {
    ...(id && PLUGIN_ID_PATTERN.test(id) ? { id } : {}),
    ...(text('name') ? { name: text('name') } : {}),
    ...(text('version') ? { version: text('version') } : {}),
    ...(text('protocolVersion') ? { protocolVersion: text('protocolVersion') } : {}),
  };
}

/** PROTOCOL §10: a rejected manifest is never quoted raw: what it holds is redacted, then cut. */
export const MAX_QUOTED_CHARS = 120;

function cut(text: string): string {
  return text.length <= MAX_QUOTED_CHARS ? text : `${text.slice(0, MAX_QUOTED_CHARS - 1)}…`;
}

/** A piece of a package's own text, as a listing or an error may show it: redacted, then cut. */
function shown(text: string): string {
  return cut(redact(text));
}

/**
 * A message with each quoted piece ("…", JSON as the validation writes it)
 * redacted on its own (decoded: an escaped control sequence does not hide a
 * secret) and cut to 120 characters, then the whole message redacted.
 */
function quotedSafely(message: string): string {
  return redact(
    message.replace(/"(?:[^"\\]|\\.)*"/g, (quoted) => {
      let text: string;
      try {
        text = JSON.parse(quoted) as string;
      } catch {
        text = quoted.slice(1, -1);
      }
      return JSON.stringify(shown(text));
    }),
  );
}

function markDuplicates(packages: DiscoveredPackage[]): void {
  const byId = new Map<string, DiscoveredPackage[]>();
  for (const found of packages) byId.set(found.id, [...(byId.get(found.id) ?? []), found]);
  for (const [id, group] of byId) {
    if (group.length < 2) continue;
    const paths = group.map((found) => found.manifestPath).join(' and ');
    for (const found of group) {
      found.error = `duplicate plugin id ${id}: declared by ${paths}; neither can be used until one is removed`;
    }
  }
}
