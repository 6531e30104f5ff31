// A helper-started call's output is an emitter, not a stream: what arrives
// before its reader attaches must still reach it, in order, with the end last.
import { describe, expect, it } from 'vitest';
import { RelayedInput, RelayedOutput } from '../../../src/core/supervision/relayed-stdio.js';

function record(output: RelayedOutput): string[] {
  const events: string[] = [];
  output.on('data', (chunk: Buffer) => events.push(`data:${chunk.toString()}`));
  output.on('end', () => events.push('end'));
  output.on('close', () => events.push('close'));
  return events;
}

describe('RelayedOutput', () => {
  it('holds chunks and the end that came before the reader, then hands them over in order', async () => {
    const output = new RelayedOutput();
    output.push(Buffer.from('a'));
    output.push(Buffer.from('b'));
    output.end();
    const events = record(output);
    expect(events).toEqual([]); // handed over after this tick's code, as a stream would
    await Promise.resolve();
    expect(events).toEqual(['data:a', 'data:b', 'end', 'close']);
    expect(output.readableEnded).toBe(true);
  });

  it('keeps the order when a chunk arrives between the reader attaching and the hand-over', async () => {
    const output = new RelayedOutput();
    output.push(Buffer.from('early'));
    const events = record(output);
    output.push(Buffer.from('late'));
    await Promise.resolve();
    output.push(Buffer.from('live'));
    output.end();
    output.end();
    output.push(Buffer.from('after the end'));
    expect(events).toEqual(['data:early', 'data:late', 'data:live', 'end', 'close']);
  });

  it('delivers nothing after destroy, and closes once', async () => {
    const output = new RelayedOutput();
    const events = record(output);
    await Promise.resolve();
    output.push(Buffer.from('x'));
    output.destroy();
    output.push(Buffer.from('y'));
    output.end();
    output.destroy();
    expect(events).toEqual(['data:x', 'close']);
    expect(output.readableEnded).toBe(false);
  });
});

describe('RelayedInput', () => {
  it('hands on writes as bytes until the end, and ends once', () => {
    const written: string[] = [];
    let ends = 0;
    const input = new RelayedInput(
      (chunk) => written.push(chunk.toString('utf8')),
      () => ends++,
    );
    input.write('é\n');
    input.write(Buffer.from('two\n'));
    input.end();
    input.end();
    input.write('after the end\n');
    expect(written).toEqual(['é\n', 'two\n']);
    expect(ends).toBe(1);
  });
});
