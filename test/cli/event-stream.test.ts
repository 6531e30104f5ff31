// The Server-Sent Events reader of remote waits (src/cli/event-stream.ts):
// events as the format defines them, whatever the network chunks look like.
import { describe, expect, it } from 'vitest';
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
