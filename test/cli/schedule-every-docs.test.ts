// An `--every` schedule starts its first batch at once (BullMQ's `every`
// job scheduler), not one interval later: `schedule add --help` and
// docs/CLI.md both say so, so nobody is surprised by the batch that appears.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { requireBuiltCli, runCli } from './support.js';

describe('schedule add --every: the first batch starts at once', () => {
  it('says so in `schedule add --help`', async () => {
    requireBuiltCli();
    const result = await runCli(['schedule', 'add', '--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain('the first batch starts at once');
  });

  it('says so in docs/CLI.md', async () => {
    const doc = (await readFile(join(REPO, 'docs', 'CLI.md'), 'utf8')).replace(/\s+/g, ' ');
    expect(doc).toContain('An `--every` schedule starts its first batch at once');
  });
});
