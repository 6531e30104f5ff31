// The Server-Sent Events reader of remote waits (src/cli/event-stream.ts):
// events as the format defines them, whatever the network chunks look like.
import { describe, expect, it } from 'vitest';
import { serverEvents as contractEvents } from '../../src/core/contract/index.js';
import { serverEvents, type ServerEvent } from '../../src/cli/event-stream.js';

async function eventsOf(chunks: string[]): Promise<ServerEvent[]> {
  async function* body() {
    yield* chunks;
  }
  const events: ServerEvent[] = [];
  for await (const event of serverEvents(body())) events.push(event);
  return events;
}

describe('serverEvents', () => {
  it('reads event and data lines; a blank line ends each event', async () => {
    const text = 'event: state\ndata: {"a":1}\n\nevent: done\ndata: {"a":2}\n\n';
    expect(await eventsOf([text])).toEqual([
      { event: 'state', data: '{"a":1}' },
      { event: 'done', data: '{"a":2}' },
    ]);
  });

  it('joins events split anywhere across chunks, also inside \\r\\n', async () => {
    const text = 'event: progress\r\ndata: {"n":"é"}\r\n\r\n: a comment\r\nevent: done\r\ndata: 1\r\n\r\n';
    const oneByOne = [...text];
    expect(await eventsOf(oneByOne)).toEqual(await eventsOf([text]));
    expect(await eventsOf(oneByOne)).toEqual([
      { event: 'progress', data: '{"n":"é"}' },
      { event: 'done', data: '1' },
    ]);
  });

  it('several data lines are one value; no data, no event; no event name is "message"; an unfinished event is dropped', async () => {
    expect(
      await eventsOf([
        'data: a\ndata:b\n\n',
        'event: empty\n\n',
        'id: 7\nretry: 10\ndata: c\n\n',
        'event: cut\ndata: d\n',
      ]),
    ).toEqual([
      { event: 'message', data: 'a\nb' },
      { event: 'message', data: 'c' },
    ]);
  });
});

describe('the contract reader (CLI, web UI and tests alike)', () => {
  async function* body(chunks: string[]) {
    yield* chunks;
  }

  it('hands out the events before the one over the bound, then fails naming the bound', async () => {
    const seen: string[] = [];
    const reading = (async () => {
      for await (const { data } of contractEvents(
        body(['data: 1\n\n', 'data: ', 'x'.repeat(40), 'x'.repeat(40)]),
        {
          maxChars: 64,
        },
      ))
        seen.push(data);
    })();
    await expect(reading).rejects.toThrow('the server sent an event longer than 64 characters');
    expect(seen).toEqual(['1']);
  });

  it('bounds data lines that never end in a blank line, each line short', async () => {
    const lines = Array.from({ length: 20 }, () => 'data: 12345678\n');
    await expect(
      (async () => {
        for await (const _event of contractEvents(body(lines), { maxChars: 100 })) void _event;
      })(),
    ).rejects.toThrow('longer than 100 characters');
  });
});
