// The fleet view's filters: version-aware comparison, each operator, and the
// errors a bad --where gets.
import { describe, expect, it } from 'vitest';
import {
  compareFactValues,
  countFactValues,
  filterFleet,
  fleetOrder,
  fleetPosition,
  parseWhere,
  type FleetRow,
} from '../../src/core/work/batches/fleet-facts.js';

const row = (projectId: string, facts: Record<string, string>): FleetRow => ({
  projectId,
  batchId: 'b',
  at: '2026-12-05T00:00:00Z',
  facts: Object.fromEntries(Object.entries(facts).map(([id, value]) => [id, { value }])),
});

describe('fleet facts', () => {
  it('compares versions as versions, numbers as numbers, the rest as text', () => {
    expect(compareFactValues('1.9', '1.10')).toBeLessThan(0);
    expect(compareFactValues('v1.2', '1.2.0')).toBe(0);
    expect(compareFactValues('1.21.3', '1.21')).toBeGreaterThan(0);
    expect(compareFactValues('1.2.3-rc1', '1.2.3')).toBeLessThan(0);
    expect(compareFactValues('1.21rc2', '1.21.0')).toBeLessThan(0);
    expect(compareFactValues('1.21rc2', '1.21rc10')).toBeLessThan(0);
    expect(compareFactValues('1.21rc2', '1.20.9')).toBeGreaterThan(0);
    expect(compareFactValues('1.2.3.4', '1.2.3.10')).toBeLessThan(0);
    expect(compareFactValues('1.20', '1.20.0')).toBe(0);
    expect(compareFactValues('9', '10')).toBeLessThan(0);
    expect(compareFactValues('bookworm', 'bullseye')).toBeLessThan(0);
  });

  it('filters with every operator; a project without the fact never matches', () => {
    const rows = [row('a', { v: '1.9' }), row('b', { v: '1.20' }), row('c', { v: '1.21.1' }), row('d', {})];
    const ids = (where: string) => filterFleet(rows, [parseWhere(where)]).map((kept) => kept.projectId);
    expect(ids('v<1.20')).toEqual(['a']);
    expect(ids('v<=1.20')).toEqual(['a', 'b']);
    expect(ids('v>1.20')).toEqual(['c']);
    expect(ids('v>=1.20.0')).toEqual(['b', 'c']);
    expect(ids('v=1.20.0')).toEqual(['b']);
    expect(ids('v!=1.20')).toEqual(['a', 'c']);
    expect(ids('v~^1\\.2')).toEqual(['b', 'c']);
    expect(filterFleet(rows, [], new Set(['c', 'a'])).map((kept) => kept.projectId)).toEqual(['a', 'c']);
  });

  it('counts values: projects without the fact (null) first, then most common first, ties in version order', () => {
    const rows = [
      row('a', { v: '1.10' }),
      row('b', { v: '2' }),
      row('c', { v: '2' }),
      row('d', {}),
      row('e', { v: '1.9' }),
      row('f', { v: '1.9rc1' }),
    ];
    expect(countFactValues(rows, 'v')).toEqual([
      { value: null, count: 1 },
      { value: '2', count: 2 },
      { value: '1.9rc1', count: 1 },
      { value: '1.9', count: 1 },
      { value: '1.10', count: 1 },
    ]);
  });

  it('sorts by a fact as versions, either way, ties by project, projects without it last', () => {
    const rows = [
      row('e', {}),
      row('d', { v: '1.9' }),
      row('c', { v: '1.20' }),
      row('b', { v: '1.9' }),
      row('a', { v: '1.21.1' }),
    ];
    const sorted = (descending: boolean) =>
      rows
        .map((r) => fleetPosition(r, 'v'))
        .sort(fleetOrder('v', descending))
        .map(([, projectId]) => projectId);
    expect(sorted(false)).toEqual(['b', 'd', 'c', 'a', 'e']);
    expect(sorted(true)).toEqual(['a', 'c', 'b', 'd', 'e']);
  });

  it('a bad --where names what is wrong', () => {
    expect(() => parseWhere('go.version')).toThrow(
      /must be NAME=VALUE, NAME!=VALUE, NAME~REGEX or NAME<VERSION/,
    );
    expect(() => parseWhere('go.version~(')).toThrow(
      /--where "go\.version~\(": error parsing regexp: .* \(the expression is RE2 syntax/,
    );
    expect(parseWhere(' go.version >= 1.20 ')).toMatchObject({
      fact: 'go.version',
      operator: '>=',
      value: '1.20',
    });
  });
});
