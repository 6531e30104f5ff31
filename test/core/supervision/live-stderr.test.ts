// A call's stderr written while it runs (live-stderr.ts, stderr-budget.ts):
// batched (a flood costs a few writes), redacted (a private key block split
// across batches included), bounded per line, and bounded per call in the
// plugin's log with the call's end kept.
import { describe, expect, it } from 'vitest';
import { LiveStderr } from '../../../src/core/supervision/live-stderr.js';
import { StderrBudget } from '../../../src/core/supervision/stderr-budget.js';
import { STDERR_LINE_CHARS, STDERR_LINES } from '../../../src/core/supervision/stderr-tail.js';

function collector() {
  const batches: string[][] = [];
  return { batches, sink: async (lines: string[]) => void batches.push(lines) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live stderr', () => {
  it('a flood of tens of thousands of lines over 1 s is written in a few batches of at most 201 lines', async () => {
    const { batches, sink } = collector();
    const live = new LiveStderr(sink, { flushMs: 250 });
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 1_000) {
      const chunk = Array.from({ length: 2_000 }, () => `line ${(n += 1)} token=hunter2`).join('\n');
      live.push(Buffer.from(`${chunk}\n`));
      await sleep(5);
    }
    await live.close();
    expect(n).toBeGreaterThan(10_000);
    expect(batches.length).toBeLessThanOrEqual(8);
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(STDERR_LINES + 1);
    const all = batches.flat();
    expect(all.join('\n')).not.toContain('hunter2');
    expect(all.at(-1)).toBe(`line ${n} token=[REDACTED]`);
    expect(all.some((line) => /^\[\d+ lines of stderr dropped\]$/.test(line))).toBe(true);
  });

  it('lines arrive while the call runs, not only at its end', async () => {
    const { batches, sink } = collector();
    const live = new LiveStderr(sink, { flushMs: 50 });
    live.push(Buffer.from('first\nsecond\npart'));
    await sleep(200);
    expect(batches).toEqual([['first', 'second']]);
    live.push(Buffer.from('ial\n'));
    await live.close();
    expect(batches.flat()).toEqual(['first', 'second', 'partial']);
  });

  it('a private key block split across batches is never written, not even its middle lines', async () => {
    const { batches, sink } = collector();
    const live = new LiveStderr(sink, { flushMs: 30 });
    live.push(Buffer.from('before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x\n'));
    await sleep(120);
    live.push(Buffer.from('c2VjcmV0bWlkZGxlbGluZQ==\n-----END RSA PRIVATE KEY-----\nafter\n'));
    await live.close();
    const text = batches.flat().join('\n');
    expect(text).toContain('before');
    expect(text).toContain('after');
    expect(text).not.toContain('MIIEowIBAAKCAQEA1x');
    expect(text).not.toContain('c2VjcmV0bWlkZGxlbGluZQ==');
  });

  it('a call that ends inside a key block shows none of it', async () => {
    const { batches, sink } = collector();
    const live = new LiveStderr(sink, { flushMs: 30 });
    live.push(Buffer.from('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n'));
    await live.close();
    expect(batches.flat().join('\n')).not.toContain('MIIEvQIBADANBgkqhkiG9w0B');
  });

  it('a line of 1 MiB is cut, redacted, and bounded', async () => {
    const { batches, sink } = collector();
    const live = new LiveStderr(sink);
    live.push(Buffer.from(`password=hunter2 ${'x'.repeat(1024 * 1024)}\nnext\n`));
    await live.close();
    const lines = batches.flat();
    expect(lines).toHaveLength(2);
    expect(lines[0]!.length).toBeLessThanOrEqual(STDERR_LINE_CHARS);
    expect(lines[0]).toMatch(/^password=\[REDACTED\]/);
    expect(lines[1]).toBe('next');
  });

  it("the plugin's log gets at most STDERR_LINES + 1 lines of one call, its last lines included", () => {
    const budget = new StderrBudget();
    const written: string[] = [];
    for (let batch = 0; batch < 50; batch += 1)
      written.push(...budget.take(Array.from({ length: 100 }, (_, i) => `l${batch * 100 + i}`)));
    written.push(...budget.end('op logs op_1 has its newest lines'));
    expect(written.length).toBeLessThanOrEqual(STDERR_LINES + 1);
    expect(written[0]).toBe('l0');
    expect(written.at(-1)).toBe('l4999');
    expect(written).toContain(
      `[${5_000 - written.length + 1} lines of this call's stderr are not kept here; op logs op_1 has its newest lines]`,
    );
  });
});
