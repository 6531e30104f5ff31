// The supervisor keeps the initialize answers it validated and verified, by
// their bytes, per trusted identity and grants (call-shortcuts.ts knownAnswers):
// the same bytes checked against another identity or other grants are
// verified again. Real calls of the native fixture.
import { closeSync, mkdtempSync, openSync, readFileSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { superviseCall, type TrustedIdentity } from '../../../src/core/supervision/supervisor.js';

const dist = join(import.meta.dirname, '../../../examples/plugins/native-fixture/dist');
const packageDir = join(mkdtempSync(join(tmpdir(), 'sy-memo-')), 'native-fixture');
cpSync(dist, packageDir, { recursive: true });
const manifest = JSON.parse(readFileSync(join(packageDir, 'plugin.json'), 'utf8')) as TrustedIdentity & {
  executable: string;
};
const executablePath = join(packageDir, manifest.executable);

async function health(identity: TrustedIdentity, grants: ('project.metadata.read' | 'project.files.read')[]) {
  const executableFd = openSync(executablePath, 'r');
  try {
    return await superviseCall({
      executablePath,
      executableFd,
      arguments: [],
      packageDir,
      identity,
      grants,
      method: 'plugin.health',
      params: {},
    });
  } finally {
    closeSync(executableFd);
  }
}

describe('verified initialize answers are kept per identity and grants', () => {
  it('the same answer fails against another trusted version after it passed against its own', async () => {
    for (let i = 0; i < 3; i++) await health(manifest, ['project.metadata.read']);
    await expect(health({ ...manifest, version: '9.9.9' }, ['project.metadata.read'])).rejects.toMatchObject({
      code: 'IDENTITY_MISMATCH',
    });
  });

  it('the method goes ahead only on the very bytes verified before: another answer never gets it', async () => {
    // A plugin that answers initialize with whatever answer.json holds, and says so if a second request comes.
    const dir = mkdtempSync(join(tmpdir(), 'sy-ahead-'));
    const script = join(dir, 'plugin.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        'read init',
        'cat answer.json',
        'if read method; then',
        '  echo method-received >&2',
        `  echo '{"jsonrpc":"2.0","id":2,"result":{"status":"healthy","checkedAt":"2026-12-05T19:00:00Z"}}'`,
        'fi',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const answer = (version: string) =>
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: 'switchyard.plugin/v1',
          plugin: {
            schemaVersion: 'switchyard.plugin-manifest/v1',
            id: 'ahead',
            name: 'Ahead',
            version,
            protocolVersion: 'switchyard.plugin/v1',
            capabilities: ['project.inspect'],
            requestedScopes: ['project.metadata.read'],
          },
          grantedScopes: ['project.metadata.read'],
        },
      })}\n`;
    const identity: TrustedIdentity = {
      id: 'ahead',
      name: 'Ahead',
      version: '1.0.0',
      capabilities: ['project.inspect'],
      requestedScopes: ['project.metadata.read'],
    };
    const call = () =>
      superviseCall({
        executablePath: script,
        arguments: [],
        packageDir: dir,
        identity,
        grants: ['project.metadata.read'],
        method: 'plugin.health',
        params: {},
      });
    writeFileSync(join(dir, 'answer.json'), answer('1.0.0'));
    for (let i = 0; i < 3; i++) expect((await call()).stderr).toEqual(['method-received']);
    // Now the plugin answers as another version: verified as before, refused, and it never got the method.
    writeFileSync(join(dir, 'answer.json'), answer('9.9.9'));
    const refused = await call().catch((error: unknown) => error as { code: string; stderr: string[] });
    expect(refused).toMatchObject({ code: 'IDENTITY_MISMATCH' });
    expect((refused as { stderr: string[] }).stderr).not.toContain('method-received');
    // And the verified answer again: the call goes through.
    writeFileSync(join(dir, 'answer.json'), answer('1.0.0'));
    expect((await call()).stderr).toEqual(['method-received']);
  });
});
