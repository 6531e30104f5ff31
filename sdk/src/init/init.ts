// initPlugin(): a new plugin project from a template that passes the kit as
// written — TypeScript (serve() from this SDK, packed by switchyard-plugin pack),
// C (the dependency-free C99 wire of the native example, built with cc) or
// Python (standard library only). Nothing is overwritten: a directory that is
// not empty is refused.
//
// The SDK is on no package registry (and anyone could publish a package of its
// name there), so the TypeScript template gets this very SDK copied into
// vendor/ and depends on it by a `file:` path.
import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFEST_SCHEMA_VERSION, PROTOCOL_VERSION } from '../constants.js';

export const LANGUAGES = ['ts', 'c', 'py'] as const;
export type Language = (typeof LANGUAGES)[number];

export interface InitOptions {
  dir: string;
  lang: Language;
  /** The plugin id; default: the directory's name. */
  id?: string;
}

export interface InitResult {
  dir: string;
  id: string;
  files: string[];
  /** The commands that build and check it, in order. */
  next: string[];
}

const VERSION = '0.1.0';
const ID = /^[a-z][a-z0-9-]{1,62}[a-z0-9]$/;
/** The C template (the native example's source) and the Python one, copied next to the compiled module by the build. */
const C_TEMPLATE = new URL('../templates/plugin.c', import.meta.url);
const PY_TEMPLATE = new URL('../templates/plugin.py', import.meta.url);
/** This SDK's package directory (dist/init/ → ../../), what the TypeScript template vendors. */
const SDK_DIR = fileURLToPath(new URL('../../', import.meta.url));
/** Where the TypeScript template keeps its copy of the SDK. */
export const VENDORED_SDK = 'vendor/switchyard-plugin-sdk';
/** The command that runs this SDK's kit, wherever it is installed. */
const KIT = `${join(SDK_DIR, 'bin', 'switchyard-plugin.js')} conformance dist`;

export async function initPlugin(options: InitOptions): Promise<InitResult> {
  const dir = resolve(options.dir);
  const id = options.id ?? basename(dir);
  if (!ID.test(id))
    throw new Error(
      `${JSON.stringify(id)} is not a plugin id (lower-case letters, digits and dashes, 3 to 64, starting with a letter): pass --id <id>`,
    );
  const present = await readdir(dir).catch(() => []);
  if (present.length > 0)
    throw new Error(`${dir} is not empty: init writes a new plugin into an empty directory`);
  const name = id
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
  const files =
    options.lang === 'ts'
      ? typescriptFiles(id, name)
      : options.lang === 'c'
        ? await cFiles(id, name)
        : await pythonFiles(id, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
  if (options.lang === 'ts') {
    await vendorSdk(join(dir, VENDORED_SDK));
    files[`${VENDORED_SDK}/`] = '';
  }
  const next =
    options.lang === 'ts'
      ? [`cd ${dir}`, 'npm install', 'npm run build', 'npm run check']
      : [`cd ${dir}`, './build.sh', KIT];
  return { dir, id, files: Object.keys(files), next };
}

/** Copies what this SDK's package holds (its package.json `files`) into `target`. */
async function vendorSdk(target: string): Promise<void> {
  const pkg = JSON.parse(await readFile(join(SDK_DIR, 'package.json'), 'utf8')) as { files: string[] };
  await mkdir(target, { recursive: true });
  for (const entry of ['package.json', ...pkg.files])
    await cp(join(SDK_DIR, entry), join(target, entry), { recursive: true });
}

function manifestOf(id: string, name: string, executable: string): string {
  const manifest = {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    id,
    name,
    version: VERSION,
    protocolVersion: PROTOCOL_VERSION,
    executable,
    capabilities: ['project.inspect'],
    requestedScopes: ['project.metadata.read', 'project.files.read'],
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

function typescriptFiles(id: string, name: string): Record<string, string> {
  const pkg = {
    name: id,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      build: 'switchyard-plugin pack src/main.ts --manifest plugin.json --out dist',
      check: 'switchyard-plugin conformance dist',
    },
    // The SDK by path, never by a registry name a stranger could publish to.
    devDependencies: { '@switchyard/plugin-sdk': `file:${VENDORED_SDK}`, esbuild: '^0.28.2' },
  };
  return {
    'plugin.json': manifestOf(id, name, id),
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'src/main.ts': `// ${id}: a Switchyard plugin. serve() speaks the protocol; you write what it does.
import { readdirSync } from 'node:fs';
import { serve, type Manifest } from '@switchyard/plugin-sdk';
// The identity the plugin announces must be the manifest that is packed (the packager checks).
import manifest from '../plugin.json' with { type: 'json' };

void serve(manifest as Manifest, {
  inspect({ project }) {
    // project.root is there only when the host granted project.files.read.
    const entries = project.root === undefined ? [] : readdirSync(project.root);
    return {
      summary: \`\${entries.length} entries in \${project.displayName}\`,
      facts: [{ id: 'entries.count', label: 'Entries', value: String(entries.length), source: 'the project root' }],
    };
  },
});
`,
    'README.md': `# ${name}

A Switchyard plugin (\`${id}\`), from \`switchyard-plugin init --lang ts\`.

    npm install          # the SDK (from ${VENDORED_SDK}/) and esbuild (the packager)
    npm run build        # dist/: plugin.json + one bundled executable
    npm run check        # the conformance kit against dist/

\`${VENDORED_SDK}/\` is the SDK of the Switchyard release that wrote this
project (it is on no package registry): keep it with the code, and replace it
with a newer release's to upgrade.

Install it by copying \`dist/\` to \`<data-dir>/plugins/${id}/\`, then
\`switchyard plugin refresh\` and review it with \`switchyard plugin show ${id}\`.
`,
  };
}

async function cFiles(id: string, name: string): Promise<Record<string, string>> {
  const source = (await readFile(C_TEMPLATE, 'utf8'))
    .replaceAll('native-fixture', id)
    .replaceAll('Native fixture', name)
    // The summary names the plugin (it said "native fixture inspected …" in an author's own plugin).
    .replaceAll('native fixture inspected', `${id} inspected`)
    .replaceAll('\\"version\\":\\"1.0.0\\"', `\\"version\\":\\"${VERSION}\\"`);
  return {
    'plugin.json': manifestOf(id, name, id),
    [`${id}.c`]: source,
    'build.sh': `#!/usr/bin/env bash
# Builds the package directory: dist/${id} and dist/plugin.json.
set -euo pipefail
here="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$here/dist"
cc -std=c99 -O2 -Wall -Wextra -Werror -o "$here/dist/${id}" "$here/${id}.c"
cp "$here/plugin.json" "$here/dist/plugin.json"
chmod 0755 "$here/dist/${id}"
chmod 0644 "$here/dist/plugin.json"
echo "built $here/dist/${id}"
`,
    'README.md': `# ${name}

A Switchyard plugin (\`${id}\`) in plain C99, from \`switchyard-plugin init --lang c\`:
newline-delimited JSON-RPC 2.0 on stdin/stdout, no dependencies. Its identity
is written in the source (the \`plugin.initialize\` answer) and must match
\`plugin.json\`: change both together.

    ./build.sh                                   # dist/${id} + dist/plugin.json
    switchyard-plugin conformance dist           # the kit (from @switchyard/plugin-sdk)

Install it by copying \`dist/\` to \`<data-dir>/plugins/${id}/\`, then
\`switchyard plugin refresh\` and review it with \`switchyard plugin show ${id}\`.
`,
  };
}

async function pythonFiles(id: string, name: string): Promise<Record<string, string>> {
  const source = (await readFile(PY_TEMPLATE, 'utf8')).replaceAll('{{id}}', id);
  return {
    'plugin.json': manifestOf(id, name, id),
    [`${id}.py`]: source,
    'build.sh': `#!/usr/bin/env bash
# Builds the package directory: dist/${id} (the script, executable) and dist/plugin.json.
set -euo pipefail
here="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$here/dist"
python3 -m py_compile "$here/${id}.py"
cp "$here/${id}.py" "$here/dist/${id}"
cp "$here/plugin.json" "$here/dist/plugin.json"
chmod 0755 "$here/dist/${id}"
chmod 0644 "$here/dist/plugin.json"
echo "built $here/dist/${id}"
`,
    'README.md': `# ${name}

A Switchyard plugin (\`${id}\`) in Python 3, standard library only, from
\`switchyard-plugin init --lang py\`: newline-delimited JSON-RPC 2.0 on
stdin/stdout. Its identity is \`plugin.json\`, which it reads from its working
directory (the package directory). Write what it finds in \`inspect()\`.

    ./build.sh                                   # dist/${id} + dist/plugin.json
    switchyard-plugin conformance dist           # the kit (from @switchyard/plugin-sdk)

Install it by copying \`dist/\` to \`<data-dir>/plugins/${id}/\`, then
\`switchyard plugin refresh\` and review it with \`switchyard plugin show ${id}\`.
`,
  };
}
