// The whole package is what was reviewed, and scripts see real paths
// (docs/PROTOCOL.md §3, §4, §9.3; docs/adr/0009-run-from-a-verified-package-copy.md).
// Real plugins in Python, sh and Node that find their files next to
// themselves (__file__, $0, import.meta.url) run; a package with a
// world-writable module or directory is refused at discovery and before a
// call; a module rewritten after trust — by a second local user or by root —
// disables the plugin before the next call, and the audit names the file and
// the host; a swap of the original after its copy was made runs nothing else.
import { execFileSync } from 'node:child_process';
import { access, chmod, mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/runtime/core-services.js';
import { readAudit } from '../../src/core/access/audit.js';
import { superviseCall } from '../../src/core/supervision/supervisor.js';
import { trustAndEnable, useCoreSuite } from '../support/core-suite.js';
import { manifestFields } from '../support/manifest.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const identityOf = (fields: Record<string, unknown>) =>
  JSON.stringify(
    Object.fromEntries(Object.entries(fields).filter(([k]) => k !== 'executable' && k !== 'arguments')),
  );

const PYTHON = `#!/usr/bin/env python3
import json, os, sys
from datetime import datetime, timezone
HERE = os.path.dirname(os.path.abspath(__file__))
import helper
from lib import h2
with open(os.path.join(HERE, "plugin.json"), encoding="utf-8") as f:
    manifest = json.load(f)
identity = {k: v for k, v in manifest.items() if k not in ("executable", "arguments")}
for line in sys.stdin:
    message = json.loads(line)
    ident, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": "switchyard.plugin/v1", "plugin": identity,
                  "grantedScopes": params.get("grantedScopes", [])}
    else:
        result = {"status": "healthy", "message": helper.WORD + h2.WORD + " " + __file__,
                  "checkedAt": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\\n")
    sys.stdout.flush()
`;

const SH = `#!/bin/sh
. "$(dirname "$0")/lib.sh"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\\([0-9]*\\).*/\\1/p')
  case "$line" in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"switchyard.plugin/v1","plugin":%s,"grantedScopes":["project.metadata.read"]}}\\n' "$id" "$IDENTITY" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{"status":"healthy","message":"%s %s","checkedAt":"2024-01-01T00:00:00Z"}}\\n' "$id" "$WORD" "$0" ;;
  esac
done
`;

const NODE = `#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { WORD } from './word.mjs';
const here = dirname(fileURLToPath(import.meta.url));
const { executable: _e, arguments: _a, ...identity } = JSON.parse(readFileSync(join(here, 'plugin.json'), 'utf8'));
for await (const line of createInterface({ input: process.stdin })) {
  const { id, method, params } = JSON.parse(line);
  const result = method === 'initialize'
    ? { protocolVersion: 'switchyard.plugin/v1', plugin: identity, grantedScopes: params.grantedScopes }
    : { status: 'healthy', message: WORD + ' ' + process.argv[1], checkedAt: new Date().toISOString() };
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
}
`;

/** <plugins>/<id>: plugin.json, the executable and its sibling files (0644 unless the executable). */
async function writePackage(plugins: string, id: string, executable: string, files: Record<string, string>) {
  const dir = join(plugins, id);
  const fields = manifestFields(id, { executable, capabilities: ['project.inspect'] });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'plugin.json'), JSON.stringify(fields), { mode: 0o644 });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    const body = text.replace('@IDENTITY@', identityOf(fields));
    await writeFile(join(dir, name), body, { mode: name === executable ? 0o755 : 0o644 });
  }
  return dir;
}

const pythonFiles = {
  'imp.py': PYTHON,
  'helper.py': 'WORD = "helper"\n',
  'lib/__init__.py': '',
  'lib/h2.py': 'WORD = "+h2"\n',
};

describe('scripts see real paths, next to their package files', () => {
  const suite = useCoreSuite('whole-package-paths');
  let core: Core;
  beforeAll(() => void ({ core } = suite));

  it.each([
    ['python', 'imp.py', pythonFiles, 'helper+h2'],
    ['shell', 'run.sh', { 'run.sh': SH, 'lib.sh': "WORD=sourced\nIDENTITY='@IDENTITY@'\n" }, 'sourced'],
    ['node', 'main.mjs', { 'main.mjs': NODE, 'word.mjs': "export const WORD = 'imported';\n" }, 'imported'],
  ])(
    'a %s plugin finds plugin.json and its siblings by its own path',
    async (kind, executable, files, word) => {
      const id = `paths-${kind}`;
      await writePackage(suite.plugins, id, executable, files);
      await trustAndEnable(core, id, ['project.metadata.read']);
      const health = await core.plugins.health(id);
      expect(health.status).toBe('healthy');
      // Its own path: a real file in the verified copy of the package, not /dev/fd/<n>.
      const { trustedTreeDigest } = await core.plugins.show(id);
      const copy = join(suite.dataDir, 'run', 'packages', trustedTreeDigest!);
      expect(health.message).toBe(`${word} ${join(copy, executable)}`);
      expect((await stat(copy)).mode & 0o7777).toBe(0o555);
      expect((await stat(join(copy, executable))).mode & 0o7777).toBe(0o555);
      expect((await stat(join(copy, 'plugin.json'))).mode & 0o7777).toBe(0o444);
      // The review lists every file with its mode and size.
      const { files: listed } = await core.plugins.show(id);
      expect(listed.map((file) => file.path)).toEqual(expect.arrayContaining(['plugin.json', executable]));
    },
  );
});

describe('a world-writable module or directory is refused, with the path and the fix', () => {
  const suite = useCoreSuite('whole-package-modes');
  let core: Core;
  let dir: string;
  beforeAll(async () => {
    ({ core } = suite);
    dir = await writePackage(suite.plugins, 'modes', 'imp.py', pythonFiles);
  });

  it('at discovery: a 0666 module, then a 0777 subdirectory', async () => {
    await chmod(join(dir, 'helper.py'), 0o666);
    await core.plugins.refresh('user:test');
    expect(await core.plugins.show('modes')).toMatchObject({
      available: false,
      error: `the file ${join(dir, 'helper.py')} is world-writable (chmod o-w it): another user could change code the plugin runs (a module it imports) after its review`,
    });
    await chmod(join(dir, 'helper.py'), 0o644);
    await chmod(join(dir, 'lib'), 0o777);
    await core.plugins.refresh('user:test');
    const { available, error } = await core.plugins.show('modes');
    expect(available).toBe(false);
    expect(error).toMatch(
      new RegExp(`^the directory ${join(dir, 'lib')} is world-writable \\(chmod o-w it\\)`),
    );
    await chmod(join(dir, 'lib'), 0o755);
  });

  it('before a call: made group-writable after trust, the call is refused and nothing runs', async () => {
    await trustAndEnable(core, 'modes', ['project.metadata.read']);
    await chmod(join(dir, 'lib', 'h2.py'), 0o664);
    await expect(core.plugins.health('modes')).rejects.toMatchObject({
      code: 'PACKAGE_INVALID',
      message: `plugin modes: the file ${join(dir, 'lib', 'h2.py')} is group-writable (chmod g-w it): another user could change code the plugin runs (a module it imports) after its review; the call was refused`,
    });
    expect(
      (await readAudit(core.redis, core.keys, 5)).find((e) => e.action === 'plugin.package-invalid'),
    ).toMatchObject({ target: 'modes', detail: { host: hostname() } });
  });
});

describe('a module changed after trust disables the plugin before the next call', () => {
  const suite = useCoreSuite('whole-package-changed');
  let core: Core;
  beforeAll(() => void ({ core } = suite));

  it('rewritten by root with other content: disabled, grants revoked, the audit names the file and host', async () => {
    const dir = await writePackage(suite.plugins, 'rewritten', 'imp.py', pythonFiles);
    await trustAndEnable(core, 'rewritten', ['project.metadata.read']);
    const before = await core.plugins.show('rewritten');
    expect((await core.plugins.health('rewritten')).status).toBe('healthy');
    const mark = join(suite.dataDir, 'rewritten-ran');
    await writeFile(
      join(dir, 'lib', 'h2.py'),
      `open(${JSON.stringify(mark)}, "w").write("ran")\nWORD = "x"\n`,
    );
    await expect(core.plugins.health('rewritten')).rejects.toMatchObject({ code: 'FINGERPRINT_CHANGED' });
    expect(await exists(mark)).toBe(false);
    const after = await core.plugins.show('rewritten');
    // The fingerprint (manifest ‖ executable) is the Go original's and did not change; the package did.
    expect(after).toMatchObject({
      trust: 'changed',
      enabled: false,
      grantedScopes: [],
      fingerprint: before.fingerprint,
      changedFiles: ['lib/h2.py'],
    });
    const audit = (await readAudit(core.redis, core.keys, 10)).find(
      (e) => e.action === 'plugin.package-changed',
    );
    expect(audit).toMatchObject({ target: 'rewritten', detail: { host: hostname(), files: ['lib/h2.py'] } });
    // A refresh keeps it changed; only a new review clears it.
    await core.plugins.refresh('user:test');
    expect(await core.plugins.show('rewritten')).toMatchObject({ trust: 'changed', enabled: false });
  });

  it('a swap of the original after its copy was made cannot run other bytes', async () => {
    const dir = await writePackage(suite.plugins, 'swapped', 'imp.py', pythonFiles);
    await trustAndEnable(core, 'swapped', ['project.metadata.read']);
    expect((await core.plugins.health('swapped')).status).toBe('healthy');
    const record = await core.plugins.authorize('swapped');
    const copy = join(suite.dataDir, 'run', 'packages', record.trustedTreeDigest!);
    // Both the executable and a module it imports replaced by rename, after the host verified the package.
    const mark = join(suite.dataDir, 'swapped-ran');
    for (const name of ['imp.py', 'helper.py']) {
      await writeFile(
        join(dir, `${name}.new`),
        `open(${JSON.stringify(mark)}, "w").write("ran")\nWORD = "x"\n`,
      );
      await chmod(join(dir, `${name}.new`), 0o755);
      await rename(join(dir, `${name}.new`), join(dir, name));
    }
    const outcome = await superviseCall({
      executablePath: join(copy, record.executable),
      packageCopy: copy,
      arguments: [],
      packageDir: record.packageDir,
      identity: record,
      grants: ['project.metadata.read'],
      method: 'plugin.health',
      params: {},
    });
    expect(outcome.result).toMatchObject({ status: 'healthy', message: `helper+h2 ${join(copy, 'imp.py')}` });
    expect(await exists(mark)).toBe(false);
  });
});

const root = process.getuid?.() === 0;
const USER = `sy-pkg-${process.pid}`;

describe.skipIf(!root)(
  'a second local user rewrites a module left writable after trust (needs root: useradd)',
  () => {
    const suite = useCoreSuite('whole-package-user');
    let core: Core;
    beforeAll(() => {
      ({ core } = suite);
      execFileSync('useradd', ['--no-create-home', '--shell', '/bin/sh', USER]);
    });
    afterAll(() => {
      execFileSync('userdel', [USER]);
    });

    it('its code never runs as the host: the plugin is disabled before the next call', async () => {
      // What `tar -x` as root keeps from an archive: a 0666 module and a 0777 directory, made so after trust.
      const dir = await writePackage(suite.plugins, 'lax', 'imp.py', pythonFiles);
      await trustAndEnable(core, 'lax', ['project.metadata.read']);
      await chmod(suite.dataDir, 0o755); // the other user must reach the package to attack it
      await chmod(join(dir, 'helper.py'), 0o666);
      await chmod(join(dir, 'lib'), 0o777);
      const project = join(suite.dataDir, 'project');
      await mkdir(project, { mode: 0o777 });
      await chmod(project, 0o777);
      const attack = `import os\nopen(os.path.join(${JSON.stringify(project)}, "pwned"), "w").write(str(os.getuid()))\nWORD = "x"\n`;
      execFileSync('runuser', ['-u', USER, '--', 'sh', '-c', `cat > '${join(dir, 'helper.py')}'`], {
        input: attack,
      });
      execFileSync('runuser', [
        '-u',
        USER,
        '--',
        'sh',
        '-c',
        `printf 'WORD = "y"\\n' > '${join(dir, 'lib', 'h2.py')}.x' && mv '${join(dir, 'lib', 'h2.py')}.x' '${join(dir, 'lib', 'h2.py')}'`,
      ]);
      await expect(core.plugins.health('lax')).rejects.toMatchObject({ code: 'FINGERPRINT_CHANGED' });
      expect(await readdir(project)).toEqual([]);
      expect(await core.plugins.show('lax')).toMatchObject({
        trust: 'changed',
        enabled: false,
        grantedScopes: [],
        changedFiles: ['helper.py', 'lib', 'lib/h2.py'],
      });
      const audit = (await readAudit(core.redis, core.keys, 10)).find(
        (e) => e.action === 'plugin.package-changed',
      );
      expect(audit).toMatchObject({
        target: 'lax',
        detail: { host: hostname(), files: ['helper.py', 'lib', 'lib/h2.py'] },
      });
      // A refresh now refuses it outright, with the path and the fix.
      await core.plugins.refresh('user:test');
      expect((await core.plugins.show('lax')).error).toMatch(/helper\.py is (world-writable|owned by uid)/);
    });
  },
);
