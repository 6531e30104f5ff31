// packPlugin(): a tiny entry that imports '@switchyard/plugin-sdk' becomes a
// package directory whose one executable runs anywhere, with no node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_SCHEMA_VERSION, PROTOCOL_VERSION } from '../src/constants.js';
import { runConformance } from '../src/conformance/run.js';
import { fingerprintOf } from '../src/fingerprint.js';
import { packPlugin, type PackResult } from '../src/pack/pack.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const sdkEntry = join(repo, 'node_modules', '@switchyard', 'plugin-sdk', 'dist', 'index.js');

const manifest = {
  schemaVersion: MANIFEST_SCHEMA_VERSION,
  id: 'packed-tiny',
  name: 'Packed tiny plugin',
  version: '0.0.7',
  protocolVersion: PROTOCOL_VERSION,
  executable: 'packed-tiny',
  capabilities: ['project.inspect'],
  requestedScopes: ['project.metadata.read', 'project.files.read'],
};

const entrySource = `import { readdirSync } from 'node:fs';
import { serve, type Manifest } from '@switchyard/plugin-sdk';
import manifest from './plugin.json' with { type: 'json' };

void serve(manifest as Manifest, {
  inspect({ project }) {
    const files = project.root === undefined ? [] : readdirSync(project.root);
    return {
      summary: \`\${files.length} entries in \${project.displayName}\`,
      facts: files.map((name) => ({ id: \`file.\${name}\`, label: 'Entry', value: name, source: 'fs' })),
    };
  },
});
`;

// The entry lives inside the repository, so '@switchyard/plugin-sdk' resolves
// through the npm workspace link in /work/main/node_modules.
let sourceDir: string;
let outsideDir: string;
let packed: PackResult;

beforeAll(async () => {
  if (!existsSync(sdkEntry)) throw new Error(`${sdkEntry} does not exist: run \`npm run build\` first`);
  sourceDir = await mkdtemp(join(here, '.tmp-pack-'));
  outsideDir = await mkdtemp(join(tmpdir(), 'sdk-pack-test-'));
  await writeFile(join(sourceDir, 'main.ts'), entrySource);
  await writeFile(join(sourceDir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  packed = await packPlugin({ entry: join(sourceDir, 'main.ts') });
});

afterAll(async () => {
  if (sourceDir) await rm(sourceDir, { recursive: true, force: true });
  if (outsideDir) await rm(outsideDir, { recursive: true, force: true });
});

describe('packPlugin', () => {
  it('writes plugin.json (0644) and one executable (0755) starting with #!/usr/bin/env node', async () => {
    expect(packed.outDir).toBe(join(sourceDir, 'dist'));
    expect((await readdir(packed.outDir)).sort()).toEqual(['packed-tiny', 'plugin.json']);
    const manifestStat = await stat(join(packed.outDir, 'plugin.json'));
    const executableStat = await stat(join(packed.outDir, 'packed-tiny'));
    expect((manifestStat.mode & 0o777).toString(8)).toBe('644');
    expect((executableStat.mode & 0o777).toString(8)).toBe('755');
    expect(manifestStat.isFile() && executableStat.isFile()).toBe(true);
    const executable = readFileSync(join(packed.outDir, 'packed-tiny'), 'utf8');
    expect(executable.startsWith('#!/usr/bin/env node\n')).toBe(true);
    // The manifest is copied byte for byte (the fingerprint covers those bytes).
    expect(readFileSync(join(packed.outDir, 'plugin.json'), 'utf8')).toBe(
      readFileSync(join(sourceDir, 'plugin.json'), 'utf8'),
    );
    expect(packed.manifest).toEqual(manifest);
    expect(packed.executablePath).toBe(join(packed.outDir, 'packed-tiny'));
    expect(packed.executableBytes).toBe(executableStat.size);
    expect(packed.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(packed.fingerprint).toBe(
      await fingerprintOf(readFileSync(join(packed.outDir, 'plugin.json')), packed.executablePath),
    );
  });

  it('bundles the SDK: the executable imports nothing from node_modules', () => {
    const executable = readFileSync(packed.executablePath, 'utf8');
    expect(executable).not.toContain('@switchyard/plugin-sdk');
    expect(executable).not.toMatch(/\bnode_modules\b/);
  });

  it('still passes runConformance when copied outside the repository, with no node_modules above it', async () => {
    const copy = join(outsideDir, 'packed-tiny');
    await cp(packed.outDir, copy, { recursive: true, preserveTimestamps: true });
    for (let dir = copy; ; dir = dirname(dir)) {
      expect(existsSync(join(dir, 'node_modules')), `${dir}/node_modules`).toBe(false);
      expect(existsSync(join(dir, 'package.json')), `${dir}/package.json`).toBe(false);
      if (dir === parse(dir).root) break;
    }
    expect(((await stat(join(copy, 'packed-tiny'))).mode & 0o777).toString(8)).toBe('755');
    const report = await runConformance(copy);
    const summary = report.checks
      .map((check) => `${check.status} ${check.name} ${check.detail ?? ''}`)
      .join('\n');
    expect(report.ok, summary).toBe(true);
    expect(report.plugin).toEqual({ id: 'packed-tiny', version: '0.0.7' });
    const inspected = report.checks.find((check) =>
      check.name.startsWith('project.inspect with project.files.read'),
    );
    expect(inspected?.status).toBe('pass');
  });

  it('refuses an invalid manifest, naming the problem, and writes nothing', async () => {
    const badDir = await mkdtemp(join(here, '.tmp-pack-bad-'));
    try {
      await writeFile(join(badDir, 'main.ts'), entrySource);
      await writeFile(join(badDir, 'plugin.json'), JSON.stringify({ ...manifest, executable: '../escape' }));
      await expect(packPlugin({ entry: join(badDir, 'main.ts') })).rejects.toThrow(/executable: .*\.\./);
      expect(existsSync(join(badDir, 'dist'))).toBe(false);
    } finally {
      await rm(badDir, { recursive: true, force: true });
    }
  });

  describe('a missing entry or manifest is named, with the fix', () => {
    const bin = join(repo, 'sdk', 'bin', 'switchyard-plugin-pack.js');
    const pack = (cwd: string, args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });

    it('an entry file that does not exist: exit 1, naming the entry, not plugin.json', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sdk-pack-missing-'));
      try {
        const result = pack(dir, ['nofile.ts']);
        expect(result.status, result.stderr).toBe(1);
        expect(result.stderr).toContain(`no entry file ${join(dir, 'nofile.ts')}`);
        expect(result.stderr).toMatch(/main TypeScript or JavaScript file/);
        expect(result.stderr).not.toMatch(/ENOENT|plugin\.json/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('an entry with no plugin.json beside it: exit 1, naming the manifest path and --manifest', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sdk-pack-missing-'));
      try {
        await writeFile(join(dir, 'main.ts'), entrySource);
        const result = pack(dir, ['main.ts']);
        expect(result.status, result.stderr).toBe(1);
        expect(result.stderr).toContain(`no manifest ${join(dir, 'plugin.json')}`);
        expect(result.stderr).toMatch(/put plugin\.json next to the entry file, or pass --manifest <path>/);
        expect(result.stderr).not.toMatch(/ENOENT/);
        const named = pack(dir, ['main.ts', '--manifest', 'nope.json']);
        expect(named.status, named.stderr).toBe(1);
        expect(named.stderr).toContain(`no manifest ${join(dir, 'nope.json')}: the --manifest path`);
        expect(existsSync(join(dir, 'dist'))).toBe(false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
