// One page of a batch's rows: failures first (failed, cancelled, pending,
// succeeded), by project id within a status, one status or all, sliced.
import { describe, expect, it } from 'vitest';
import { pageOfResults, type ResultRow } from '../../src/core/work/batches/batch-results.js';

const rows: ResultRow[] = [
  { projectId: 'a', status: 'succeeded' },
  { projectId: 'b', status: 'pending' },
  { projectId: 'c', status: 'failed', error: { code: 'PLUGIN_ERROR', message: 'x' } },
  { projectId: 'd', status: 'cancelled' },
  { projectId: 'e', status: 'failed', error: { code: 'TIMEOUT', message: 'y' } },
  { projectId: 'f', status: 'succeeded' },
];
const ids = (page: { items: ResultRow[] }) => page.items.map((row) => row.projectId);

describe('batch results page', () => {
  it('lists failures first, then cancelled, pending, succeeded, by project id within each', () => {
    const page = pageOfResults(rows);
    expect(ids(page)).toEqual(['c', 'e', 'd', 'b', 'a', 'f']);
    expect(page).toMatchObject({ total: 6, offset: 0, limit: 100 });
  });

  it('slices by offset and limit, and filters one status with its own total', () => {
    expect(ids(pageOfResults(rows, { offset: 2, limit: 3 }))).toEqual(['d', 'b', 'a']);
    const succeeded = pageOfResults(rows, { status: 'succeeded', offset: 1, limit: 1 });
    expect(ids(succeeded)).toEqual(['f']);
    expect(succeeded.total).toBe(2);
    expect(pageOfResults(rows, { offset: 10 }).items).toEqual([]);
  });
});
