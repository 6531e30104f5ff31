// Reasons live in the repository: no code comment, doc or test cites an issue
// number of a tracker a clone does not have (say the reason, or cite the
// decision record in docs/adr/), and every decision record cited exists.
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { filesUnder, readRepoFile } from '../support/repo-files.js';

/** "issue" or "issues" and a number (also with "#" or "no."), or a number in "(#…)". */
const ISSUE_REFERENCE = /\bissues?\s*(?:#|no\.?\s*)?\d+|\(#\d+\)/i;
const RECORD_CITATION = /docs\/adr\/(\d{4})[\w.-]*/g;
/** Generated or vendored text that is not ours to word. */
const SKIPPED = new Set(['package-lock.json']);

async function textFiles(): Promise<{ file: string; text: string }[]> {
  const found: { file: string; text: string }[] = [];
  for (const file of await filesUnder('.')) {
    if (SKIPPED.has(file)) continue;
    const text = await readRepoFile(file);
    if (!text.includes('\0')) found.push({ file, text });
  }
  return found;
}

describe('references to decisions', () => {
  it('no file cites an issue number', async () => {
    const offenders: string[] = [];
    for (const { file, text } of await textFiles()) {
      text.split('\n').forEach((line, index) => {
        if (ISSUE_REFERENCE.test(line)) offenders.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(
      offenders,
      'say the reason, or cite the decision record (docs/adr/NNNN-name.md; CONTRIBUTING.md "a decision")',
    ).toEqual([]);
  });

  it('every decision record cited exists', async () => {
    const records = await readdir(join(REPO, 'docs', 'adr'));
    const missing: string[] = [];
    for (const { file, text } of await textFiles()) {
      for (const [citation, number] of text.matchAll(RECORD_CITATION)) {
        const cited = citation.replace(/[.)]+$/, '');
        const exact = cited.endsWith('.md') ? existsSync(join(REPO, cited)) : undefined;
        const byNumber = records.some((record) => record.startsWith(`${number}-`));
        if (exact === false || !byNumber) missing.push(`${file}: ${cited}`);
      }
    }
    expect(missing, 'docs/adr/ has no such record').toEqual([]);
  });
});
