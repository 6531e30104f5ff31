// batch export as a pure generator: jsonl one line per project, csv one row
// per fact with real quoting and formula escaping, produced chunk by chunk.
import { describe, expect, it } from 'vitest';
import { exportBatch } from '../../src/core/work/batches/batch-export.js';
import type { ProjectOutcome } from '../../src/core/work/batches/batch-store.js';

const outcomes: ProjectOutcome[] = [
  {
    projectId: 'shop',
    status: 'succeeded',
    result: {
      summary: 's',
      facts: [
        { id: 'name', label: 'Name', value: 'shop, "the" store\nline 2', source: 'package.json' },
        { id: 'cmd', label: 'Script', value: '=HYPERLINK("x")', source: 'package.json', warning: 'odd' },
      ],
      actions: [],
      warnings: ['lock file is old', 'no CI'],
      observedAt: '2026-01-01T00:00:00Z',
    },
  },
  { projectId: 'blog', status: 'failed', error: { code: 'TIMEOUT', message: 'no response within 15s' } },
];

async function* chunked(): AsyncGenerator<ProjectOutcome[]> {
  yield outcomes.slice(0, 1);
  yield [];
  yield outcomes.slice(1);
}

async function collect(generator: AsyncGenerator<string>): Promise<string[]> {
  const parts: string[] = [];
  for await (const part of generator) parts.push(part);
  return parts;
}

describe('exportBatch', () => {
  it('jsonl: one JSON line per project, one chunk per chunk read', async () => {
    const parts = await collect(exportBatch('b1', 'jsonl', chunked()));
    expect(parts).toHaveLength(2);
    const lines = parts.join('').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(outcomes.map((o) => ({ batchId: 'b1', ...o })));
  });

  it('csv: a header, one row per fact, a failed project as one row with its error; quoted and formula-safe', async () => {
    const text = (await collect(exportBatch('b1', 'csv', chunked()))).join('');
    expect(text).toBe(
      [
        'batchId,projectId,status,factId,label,value,source,warning,warnings,errorCode,errorMessage,redacted',
        'b1,shop,succeeded,name,Name,"shop, ""the"" store\nline 2",package.json,,lock file is old; no CI,,,',
        `b1,shop,succeeded,cmd,Script,"'=HYPERLINK(""x"")",package.json,odd,lock file is old; no CI,,,`,
        'b1,blog,failed,,,,,,,TIMEOUT,no response within 15s,',
        '',
      ].join('\n'),
    );
  });
});
