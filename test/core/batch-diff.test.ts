// batch diff as a pure function: facts matched by id, only projects with a
// difference listed, status changes, absent and failed projects.
import { describe, expect, it } from 'vitest';
import type { Fact } from '@switchyard/plugin-sdk/protocol';
import { diffBatches, hasDifferences, type DiffSide } from '../../src/core/work/batches/batch-diff.js';
import type { ProjectOutcome } from '../../src/core/work/batches/batch-store.js';

const fact = (id: string, value: string, warning?: string): Fact => ({
  id,
  label: id.toUpperCase(),
  value,
  source: 'test',
  ...(warning ? { warning } : {}),
});

const ok = (projectId: string, facts: Fact[]): ProjectOutcome => ({
  projectId,
  status: 'succeeded',
  result: { summary: '', facts, actions: [], warnings: [], observedAt: '2026-01-01T00:00:00Z' },
});

const failed = (projectId: string): ProjectOutcome => ({
  projectId,
  status: 'failed',
  error: { code: 'TIMEOUT', message: 'no response' },
});

const side = (batchId: string, outcomes: (ProjectOutcome | [string, 'pending'])[]): DiffSide => ({
  batchId,
  outcomes: new Map(
    outcomes.map((item): [string, ProjectOutcome | 'pending'] =>
      Array.isArray(item) ? item : [item.projectId, item],
    ),
  ),
});

describe('diffBatches', () => {
  it('finds an added, a removed and a changed fact, and lists only projects that differ', () => {
    const a = side('a', [
      ok('same', [fact('x', '1')]),
      ok('shop', [fact('node', '20'), fact('lock', 'yes'), fact('name', 'shop')]),
    ]);
    const b = side('b', [
      ok('same', [fact('x', '1')]),
      ok('shop', [fact('node', '22'), fact('name', 'shop'), fact('license', 'MIT')]),
    ]);
    const diff = diffBatches(a, b);
    expect(diff).toEqual({
      from: 'a',
      to: 'b',
      projects: [
        {
          projectId: 'shop',
          added: [fact('license', 'MIT')],
          removed: [fact('lock', 'yes')],
          changed: [{ id: 'node', from: '20', to: '22' }],
          status: { from: 'succeeded', to: 'succeeded' },
        },
      ],
    });
    expect(hasDifferences(diff)).toBe(true);
  });

  it('no difference: empty list, hasDifferences false', () => {
    const a = side('a', [ok('p', [fact('x', '1')]), failed('q')]);
    const b = side('b', [ok('p', [fact('x', '1')]), failed('q')]);
    expect(diffBatches(a, b).projects).toEqual([]);
    expect(hasDifferences(diffBatches(a, b))).toBe(false);
  });

  it('a project that started failing shows the status change and no fact noise', () => {
    const diff = diffBatches(side('a', [ok('p', [fact('x', '1')])]), side('b', [failed('p')]));
    expect(diff.projects).toEqual([
      { projectId: 'p', added: [], removed: [], changed: [], status: { from: 'succeeded', to: 'failed' } },
    ]);
  });

  it('a project only in the newer batch has all its facts added; one only in the older, removed', () => {
    const diff = diffBatches(
      side('a', [ok('old', [fact('x', '1')])]),
      side('b', [ok('new', [fact('y', '2')])]),
    );
    expect(diff.projects).toEqual([
      {
        projectId: 'new',
        added: [fact('y', '2')],
        removed: [],
        changed: [],
        status: { from: 'absent', to: 'succeeded' },
      },
      {
        projectId: 'old',
        added: [],
        removed: [fact('x', '1')],
        changed: [],
        status: { from: 'succeeded', to: 'absent' },
      },
    ]);
  });

  it('a warning that appears is a change; a pending project is listed with status pending', () => {
    const diff = diffBatches(
      side('a', [ok('p', [fact('x', '1')]), ok('q', [])]),
      side('b', [ok('p', [fact('x', '1', 'outdated')]), ['q', 'pending']]),
    );
    expect(diff.projects).toEqual([
      {
        projectId: 'p',
        added: [],
        removed: [],
        changed: [{ id: 'x', from: '1', to: '1', warning: { from: null, to: 'outdated' } }],
        status: { from: 'succeeded', to: 'succeeded' },
      },
      { projectId: 'q', added: [], removed: [], changed: [], status: { from: 'succeeded', to: 'pending' } },
    ]);
  });
});
