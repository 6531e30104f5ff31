// Webhook administration over the HTTP API and the CLI (local and remote):
// admin only (a viewer and an operator are refused: 403, CLI exit 4), the URL
// and the events checked (400 / exit 2, naming what to fix), add and remove
// audited, and the secret — read from a file by the CLI — never in any answer,
// any CLI output or the audit.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, globalArgs, runCli, setUpApi, type Api, type ApiSetup } from './support.js';

const SECRET = 'do-not-show-this-webhook-secret-5f2c9a';
const P = '/api/v1';
let setup: ApiSetup | undefined;
let api: Api;
let secretFile = '';
const tokens: Record<'viewer' | 'operator', string> = { viewer: '', operator: '' };
/** Every answer and every CLI output of this file, checked for the secret at the end. */
const seen: string[] = [];

beforeAll(async () => {
  setup = await setUpApi('api-webhooks');
  api = setup.api;
  secretFile = join(setup.root, 'hook.secret');
  await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
  for (const role of ['viewer', 'operator'] as const) {
    const made = await call<{ token: string }>(api, 'POST', `${P}/tokens`, {
      token: api.adminToken,
      body: { name: `hook-${role}`, role },
    });
    tokens[role] = made.json.token;
  }
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

async function http(method: string, path: string, token: string, body?: unknown) {
  const answer = await call(api, method, `${P}${path}`, { token, ...(body ? { body } : {}) });
  seen.push(answer.text);
  return answer;
}

async function cli(args: string[], env?: Record<string, string>) {
  const run = env
    ? await runCli(args, 30_000, env)
    : await runCli([...globalArgs(setup!.installation), ...args]);
  seen.push(run.output);
  return run;
}

const remote = (token: string) => ({ SWITCHYARD_URL: api.base, SWITCHYARD_TOKEN: token });

describe('webhooks over the API', () => {
  it('only an admin adds, lists and removes webhooks; answers never carry the secret', async () => {
    const body = { url: 'http://127.0.0.1:9/hook', events: ['batch.finished'], secret: SECRET };
    for (const role of ['viewer', 'operator'] as const) {
      expectProblem(await http('POST', '/webhooks', tokens[role], body), 403);
      expectProblem(await http('GET', '/webhooks', tokens[role]), 403);
      expectProblem(await http('GET', '/webhooks/deliveries', tokens[role]), 403);
    }
    const added = await http('POST', '/webhooks', api.adminToken, { ...body, pluginId: 'fixture-inspector' });
    expect(added.status, added.text).toBe(201);
    const hook = added.json as { id: string };
    expect(added.json).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['batch.finished'] });
    expect(Object.keys(added.json as object)).not.toContain('secret');
    const list = await http('GET', '/webhooks', api.adminToken);
    expect((list.json as { id: string }[]).map((item) => item.id)).toContain(hook.id);
    expect((await http('GET', `/webhooks/${hook.id}/deliveries`, api.adminToken)).json).toEqual([]);
    const audit = await http('GET', '/audit?action=webhook.', api.adminToken);
    expect((audit.json as { items: { action: string }[] }).items.map((entry) => entry.action)).toContain(
      'webhook.add',
    );
    expect((await http('DELETE', `/webhooks/${hook.id}`, api.adminToken)).json).toEqual({
      id: hook.id,
      removed: true,
    });
    expectProblem(await http('DELETE', `/webhooks/${hook.id}`, api.adminToken), 404);
    const after = await http('GET', '/audit?action=webhook.', api.adminToken);
    expect((after.json as { items: { action: string }[] }).items.map((entry) => entry.action)).toEqual([
      'webhook.remove',
      'webhook.add',
    ]);
  });

  it('a URL that is not http(s) and an unknown event are refused, naming the field', async () => {
    const ftp = expectProblem(
      await http('POST', '/webhooks', api.adminToken, {
        url: 'ftp://example.org/hook',
        events: ['batch.finished'],
        secret: SECRET,
      }),
      400,
    );
    expect(ftp.detail).toMatch(/http:\/\/ or https:\/\//);
    const unknown = expectProblem(
      await http('POST', '/webhooks', api.adminToken, {
        url: 'https://example.org/hook',
        events: ['batch.exploded'],
        secret: SECRET,
      }),
      400,
    );
    expect(JSON.stringify(unknown)).toMatch(/events/);
  });

  it('a URL with credentials (user:pass@ or user@) is refused, and nothing is stored', async () => {
    for (const url of [
      'https://hookuser:hookpass99@example.org/hook',
      'https://hooktoken77@example.org/hook',
    ]) {
      const refused = expectProblem(
        await http('POST', '/webhooks', api.adminToken, { url, events: ['batch.finished'], secret: SECRET }),
        400,
      );
      expect(refused.detail).toMatch(/--url carries credentials \(user:pass@\); remove them/);
      expect(JSON.stringify(refused)).not.toMatch(/hookpass99|hooktoken77/);
    }
    const list = await http('GET', '/webhooks', api.adminToken);
    expect(list.text).not.toMatch(/hookuser|hooktoken77/);
  });

  it("a viewer and an operator read a webhook URL's query values and fragment redacted in the audit; an admin reads it whole", async () => {
    const url = 'https://hooks.example.org/notify?key=QUERYKEY123&channel=ops&flag#frag-SECRET9';
    const added = await http('POST', '/webhooks', api.adminToken, {
      url,
      events: ['batch.finished'],
      secret: SECRET,
    });
    expect(added.status, added.text).toBe(201);
    const { id } = added.json as { id: string };
    expect((await http('DELETE', `/webhooks/${id}`, api.adminToken)).status).toBe(200);
    const urls = async (token: string) => {
      const audit = await http('GET', `/audit?action=webhook.&target=${id}`, token);
      expect(audit.status, audit.text).toBe(200);
      const items = (audit.json as { items: { action: string; detail: { url?: string } }[] }).items;
      expect(items.map((entry) => entry.action)).toEqual(['webhook.remove', 'webhook.add']);
      return { text: audit.text, urls: items.map((entry) => entry.detail.url) };
    };
    for (const role of ['viewer', 'operator'] as const) {
      const read = await urls(tokens[role]);
      const shown =
        'https://hooks.example.org/notify?key=[REDACTED]&channel=[REDACTED]&[REDACTED]#[REDACTED]';
      expect(read.urls, role).toEqual([shown, shown]);
      expect(read.text, role).not.toMatch(/QUERYKEY123|frag-SECRET9|=ops/);
    }
    expect((await urls(api.adminToken)).urls).toEqual([url, url]);
  });
});

describe('webhooks in the CLI', () => {
  it('add (secret from a file), list, deliveries and remove, local and remote; the secret is never printed', async () => {
    const add = await cli([
      'webhook',
      'add',
      '--url',
      'https://hooks.example.org/switchyard',
      '--events',
      'batch.finished,facts.changed',
      '--secret-file',
      secretFile,
    ]);
    expect(add.code, add.output).toBe(0);
    const id = /webhook (wh_[a-z0-9]+) added/.exec(add.output)?.[1];
    expect(id, add.output).toBeDefined();
    for (const args of [
      ['webhook', 'list'],
      ['--json', 'webhook', 'list'],
      ['webhook', 'deliveries'],
    ]) {
      const run = await cli(args);
      expect(run.code, run.output).toBe(0);
      expect(run.output).toContain(args.includes('deliveries') ? 'DELIVERY' : id!);
    }
    const remoteList = await cli(['--json', 'webhook', 'list'], remote(api.adminToken));
    expect(remoteList.code, remoteList.output).toBe(0);
    expect(JSON.parse(remoteList.output)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id, events: ['batch.finished', 'facts.changed'] })]),
    );
    const remoteAdd = await cli(
      [
        '--json',
        'webhook',
        'add',
        '--url',
        'http://127.0.0.1:9/x',
        '--events',
        'schedule.failed',
        '--secret-file',
        secretFile,
      ],
      remote(api.adminToken),
    );
    expect(remoteAdd.code, remoteAdd.output).toBe(0);
    const removed = await cli(['webhook', 'remove', id!], remote(api.adminToken));
    expect(removed.code, removed.output).toBe(0);
    expect(removed.output).toContain(`webhook ${id} removed`);
  });

  it('a viewer cannot add a webhook (exit 4)', async () => {
    const run = await cli(
      [
        'webhook',
        'add',
        '--url',
        'https://x.example/h',
        '--events',
        'batch.finished',
        '--secret-file',
        secretFile,
      ],
      remote(tokens.viewer),
    );
    expect(run.code, run.output).toBe(4);
    expect(run.output).toMatch(/admin/);
  });

  it('bad input is exit 2 naming what to fix', async () => {
    const base = ['webhook', 'add', '--secret-file', secretFile];
    const ftp = await cli([...base, '--url', 'ftp://x.example/h', '--events', 'batch.finished']);
    expect(ftp.code, ftp.output).toBe(2);
    expect(ftp.output).toMatch(/--url must be http:\/\/ or https:\/\//);
    const events = await cli([
      ...base,
      '--url',
      'https://x.example/h',
      '--events',
      'batch.finished,batch.exploded',
    ]);
    expect(events.code, events.output).toBe(2);
    expect(events.output).toMatch(
      /unknown event "batch.exploded"; the events are batch.finished, batch.new-failures/,
    );
    const missing = await cli([
      'webhook',
      'add',
      '--url',
      'https://x.example/h',
      '--events',
      'batch.finished',
      '--secret-file',
      join(setup!.root, 'no-such-file'),
    ]);
    expect(missing.code, missing.output).toBe(2);
    expect(missing.output).toMatch(/--secret-file .* cannot be read/);
    const empty = join(setup!.root, 'empty.secret');
    await writeFile(empty, '\n');
    const blank = await cli([
      ...base.slice(0, 2),
      '--secret-file',
      empty,
      '--url',
      'https://x.example/h',
      '--events',
      'batch.finished',
    ]);
    expect(blank.code, blank.output).toBe(2);
    expect(blank.output).toMatch(/secret is empty/);
    const credentials = await cli([
      ...base,
      '--url',
      'https://hookuser:hookpass99@x.example/h',
      '--events',
      'batch.finished',
    ]);
    expect(credentials.code, credentials.output).toBe(2);
    expect(credentials.output).toMatch(/--url carries credentials \(user:pass@\); remove them/);
  });

  it('the secret appeared in no answer, no CLI output and not in the audit', async () => {
    seen.push((await http('GET', '/audit?limit=200', api.adminToken)).text);
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) expect(text).not.toContain(SECRET);
  });
});
