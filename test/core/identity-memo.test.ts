// The supervisor keeps the initialize answers it validated and verified, by
// their bytes, per trusted identity and grants (supervisor.ts knownAnswers):
// the same bytes checked against another identity or other grants are
// verified again. Real calls of the native fixture.
import { closeSync, mkdtempSync, openSync, readFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { superviseCall, type TrustedIdentity } from '../../src/core/supervision/supervisor.js';

const dist = join(import.meta.dirname, '../../examples/plugins/native-fixture/dist');
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
});
