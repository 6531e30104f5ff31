// Webhooks as their owners use them, over the API and the CLI, delivered by
// a real worker process to real HTTP receivers on loopback that verify each
// signature: a ping, a delivery shown with its body and the receiver's answer
// (a hostile receiver's megabyte of escape codes kept as a short, escaped
// excerpt), a redelivery, an edit (URL, events, inactive), and a secret
// rotation whose old secret signs too for its window — and then no more.
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/core/runtime/index.js';
import type { DeliveryRecord, WebhookView } from '../../src/core/work/notify/index.js';
import {
  call,
  expectProblem,
  globalArgs,
  runCli,
  setUpApi,
  startWorker,
  waitFor,
  type Api,
  type ApiSetup,
} from './support.js';

const P = '/api/v1';
const OLD_SECRET = 'lifecycle-old-secret-4b7e1d';
const NEW_SECRET = 'lifecycle-new-secret-9c3a2f';
const NEWEST_SECRET = 'lifecycle-newest-secret-5e8d0b';
let setup: ApiSetup | undefined;
let api: Api;
let runtime: Runtime | undefined;
let receiver: Server | undefined;
let base = '';
let viewerToken = '';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The secrets whose signature is among the headers sent. */
  verifiedWith: string[];
}
const received: Received[] = [];
const KNOWN_SECRETS = [OLD_SECRET, NEW_SECRET, NEWEST_SECRET];
const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** What each path answers: /hook a short JSON, /hostile a megabyte of escape codes. */
function answer(path: string, response: ServerResponse) {
  if (path === '/slow') {
    setTimeout(() => response.writeHead(200).end('late'), 3_000);
    return;
  }
  if (path === '/hostile') {
    response.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=receiver-cookie-77' });
    const chunk = `\u001b[2J\u001b]0;owned\u0007${OLD_SECRET} `.repeat(64);
    for (let sent = 0; sent < 1024 * 1024; sent += chunk.length) response.write(chunk);
    response.end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json', 'x-receiver': 'lifecycle' });
  response.end(JSON.stringify({ pong: true, note: 'received' }));
}

async function startReceiver(): Promise<void> {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const signatures = [
        request.headers['x-switchyard-signature-256'],
        request.headers['x-switchyard-signature-256-previous'],
      ];
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        raw,
        verifiedWith: KNOWN_SECRETS.filter((secret) => signatures.includes(sign(secret, raw))),
      });
      answer(request.url ?? '', response);
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  setup = await setUpApi('api-webhook-lifecycle');
  api = setup.api;
  await startReceiver();
  await startWorker(setup.installation);
  runtime = await createRuntime(setup.installation);
  const viewer = await call<{ token: string }>(api, 'POST', `${P}/tokens`, {
    token: api.adminToken,
    body: { name: 'lifecycle-viewer', role: 'viewer' },
  });
  viewerToken = viewer.json.token;
}, 60_000);

afterAll(async () => {
  await runtime?.close().catch(() => {});
  receiver?.closeAllConnections();
  receiver?.close();
  await setup?.close();
});

const admin = <T>(method: string, path: string, body?: unknown) =>
  call<T>(api, method, `${P}${path}`, { token: api.adminToken, ...(body !== undefined ? { body } : {}) });
const cli = (args: string[]) => runCli([...globalArgs(setup!.installation), ...args]);

async function addHook(path = '/hook', secret = OLD_SECRET): Promise<WebhookView> {
  const added = await admin<WebhookView>('POST', '/webhooks', {
    url: `${base}${path}`,
    events: ['batch.finished'],
    secret,
  });
  expect(added.status, added.text).toBe(201);
  return added.json;
}

/** The delivery once a worker has ended it, and what the receiver got for it. */
async function settled(deliveryId: string): Promise<{ record: DeliveryRecord; got: Received }> {
  let record: DeliveryRecord | undefined;
  await waitFor(
    `delivery ${deliveryId} delivered`,
    async () => {
      record = (await admin<DeliveryRecord>('GET', `/webhooks/deliveries/${deliveryId}`)).json;
      return record.state === 'delivered';
    },
    20_000,
  );
  const got = received.find((entry) => entry.headers['x-switchyard-delivery'] === deliveryId);
  expect(got, `the receiver got ${deliveryId}`).toBeDefined();
  return { record: record!, got: got! };
}

async function ping(hookId: string): Promise<{ record: DeliveryRecord; got: Received }> {
  const queued = await admin<DeliveryRecord>('POST', `/webhooks/${hookId}/ping`, {});
  expect(queued.status, queued.text).toBe(202);
  expect(queued.json).toMatchObject({ event: 'ping', webhookId: hookId, state: 'pending' });
  return settled(queued.json.deliveryId);
}

describe('webhooks: ping, answers, redelivery, edit, secret rotation', () => {
  it('a ping arrives signed; the delivery shows the body sent and the answer (API and CLI)', async () => {
    const hook = await addHook();
    const { record, got } = await ping(hook.id);
    expect(got.headers['x-switchyard-event']).toBe('ping');
    expect(got.verifiedWith).toEqual([OLD_SECRET]);
    expect(got.headers['x-switchyard-signature-256-previous']).toBeUndefined();
    expect(record.body).toBe(got.raw);
    expect(JSON.parse(record.body)).toMatchObject({
      event: 'ping',
      deliveryId: record.deliveryId,
      data: { webhook: { id: hook.id, active: true } },
    });
    const [attempt] = record.attempts;
    expect(attempt).toMatchObject({ statusCode: 200, response: { truncated: false } });
    expect(JSON.parse(attempt!.response!.body)).toEqual({ pong: true, note: 'received' });
    expect(attempt!.response!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-receiver': 'lifecycle',
    });

    const listed = await admin<{ deliveryId: string; attempts: { response?: unknown }[] }[]>(
      'GET',
      `/webhooks/${hook.id}/deliveries`,
    );
    expect(listed.json[0]).toMatchObject({ deliveryId: record.deliveryId });
    expect(listed.json[0]!.attempts[0]!.response).toEqual(attempt!.response);

    const shown = await cli(['webhook', 'delivery', 'show', record.deliveryId]);
    expect(shown.code, shown.output).toBe(0);
    expect(shown.output).toMatch(/Event\s+ping/);
    expect(shown.output).toMatch(/Attempt 1 at .*: HTTP 200 in \d+ ms/);
    expect(shown.output).toContain('x-receiver: lifecycle');
    expect(shown.output).toContain('{"pong":true,"note":"received"}');
    expect(shown.output).toContain(`"deliveryId": "${record.deliveryId}"`);
    const table = await cli(['webhook', 'deliveries', hook.id]);
    expect(table.code, table.output).toBe(0);
    expect(table.output).toMatch(/ping\s+delivered\s+1\s+HTTP 200 in \d+ ms/);
    const unknown = await cli(['webhook', 'delivery', 'show', 'no-such-delivery']);
    expect(unknown.code, unknown.output).toBe(2);
    expect(unknown.output).toMatch(/unknown delivery "no-such-delivery"/);
  }, 60_000);

  it("a hostile receiver's megabyte of escape codes is kept as a short excerpt, escaped and redacted", async () => {
    const hook = await addHook('/hostile');
    const { record } = await ping(hook.id);
    const [attempt] = record.attempts;
    expect(attempt!.statusCode).toBe(200);
    expect(attempt!.response!.truncated).toBe(true);
    const stored = JSON.stringify(record.attempts);
    expect(stored.length).toBeLessThan(12_000);
    expect(stored).not.toMatch(/\\u001b|\\u0007/); // JSON's escapes of ESC and BEL: none stored raw
    expect(attempt!.response!.body).toContain('\\x1b[2J');
    expect(stored).not.toContain(OLD_SECRET);
    expect(stored).not.toContain('receiver-cookie-77');
    const shown = await cli(['webhook', 'delivery', 'show', record.deliveryId]);
    expect(shown.code, shown.output).toBe(0);
    expect(['\u001b', '\u0007'].filter((control) => shown.output.includes(control))).toEqual([]);
    expect(shown.output).toContain('body (the start only)');
  }, 60_000);

  it('a redelivery sends the same event and data again under a new id, signed; one in flight is refused', async () => {
    const hook = await addHook();
    const { record: first } = await ping(hook.id);
    const run = await cli(['--json', 'webhook', 'redeliver', first.deliveryId]);
    expect(run.code, run.output).toBe(0);
    const again = JSON.parse(run.output) as DeliveryRecord;
    expect(again.deliveryId).not.toBe(first.deliveryId);
    expect(again.redeliveryOf).toBe(first.deliveryId);
    const { record, got } = await settled(again.deliveryId);
    expect(got.headers['x-switchyard-redelivery-of']).toBe(first.deliveryId);
    expect(got.verifiedWith).toEqual([OLD_SECRET]);
    const [before, after] = [JSON.parse(first.body), JSON.parse(record.body)] as Record<string, unknown>[];
    expect(after).toMatchObject({
      event: 'ping',
      redeliveryOf: first.deliveryId,
      deliveryId: again.deliveryId,
    });
    expect(after!.data).toEqual(before!.data);
    expect(after!.at).toBe(before!.at);
    expectProblem(await admin('POST', '/webhooks/deliveries/no-such/redeliver', {}), 404);
    const slow = await addHook('/slow');
    const inFlight = await admin<DeliveryRecord>('POST', `/webhooks/${slow.id}/ping`, {});
    const refused = expectProblem(
      await admin('POST', `/webhooks/deliveries/${inFlight.json.deliveryId}/redeliver`, {}),
      409,
    );
    expect(refused.detail).toMatch(
      /still being sent \(pending\); redeliver it once it is delivered or failed/,
    );
    const audit = await admin<{ items: { action: string }[] }>(
      'GET',
      `/audit?action=webhook.&target=${hook.id}`,
    );
    expect(audit.json.items.map((entry) => entry.action)).toEqual([
      'webhook.redeliver',
      'webhook.ping',
      'webhook.add',
    ]);
  }, 60_000);

  it('an edit changes the URL and events; an inactive webhook gets no new event, a ping still', async () => {
    const hook = await addHook('/moved-from');
    const edited = await cli([
      '--json',
      'webhook',
      'edit',
      hook.id,
      '--url',
      `${base}/hook`,
      '--events',
      'batch.finished,operation.finished',
      '--inactive',
    ]);
    expect(edited.code, edited.output).toBe(0);
    expect(JSON.parse(edited.output)).toMatchObject({
      id: hook.id,
      url: `${base}/hook`,
      events: ['batch.finished', 'operation.finished'],
      active: false,
    });
    const count = () => received.filter((entry) => entry.raw.includes(`"webhookId":"${hook.id}"`)).length;
    // Other tests' webhooks take batch.finished too: this one's deliveries are what is checked.
    await runtime!.webhooks.publish('batch.finished', { n: 1 }, { key: `inactive-${hook.id}` });
    expect((await admin<unknown[]>('GET', `/webhooks/${hook.id}/deliveries`)).json).toEqual([]);
    const { got } = await ping(hook.id);
    expect(got.path).toBe('/hook');
    const reactivated = await admin<WebhookView>('POST', `/webhooks/${hook.id}`, { active: true });
    expect(reactivated.json.active).toBe(true);
    const before = count();
    expect(
      await runtime!.webhooks.publish('operation.finished', { n: 2 }, { key: `active-${hook.id}` }),
    ).toBe(1);
    await waitFor('the operation.finished delivery', async () => count() === before + 1, 20_000);

    expectProblem(await admin('POST', `/webhooks/${hook.id}`, {}), 400);
    expectProblem(await admin('POST', `/webhooks/${hook.id}`, { url: 'ftp://x.example/h' }), 400);
    const both = await cli(['webhook', 'edit', hook.id, '--active', '--inactive']);
    expect(both.code, both.output).toBe(2);
    expect(both.output).toMatch(/--active or --inactive, not both/);
    // A global --url before `webhook` is the API's, never the webhook's new URL.
    const apiUrl = await runCli(['--url', api.base, 'webhook', 'edit', hook.id, '--active'], 30_000, {
      SWITCHYARD_TOKEN: api.adminToken,
    });
    expect(apiUrl.code, apiUrl.output).toBe(0);
    expect(apiUrl.output).toContain(`→ ${base}/hook`);
  }, 60_000);

  it('a rotated secret: old and new both sign within the window, only the new after it', async () => {
    const hook = await addHook();
    const newFile = join(setup!.root, 'new.secret');
    await writeFile(newFile, `${NEW_SECRET}\n`, { mode: 0o600 });
    const rotated = await cli(['--json', 'webhook', 'rotate-secret', hook.id, '--secret-file', newFile]);
    expect(rotated.code, rotated.output).toBe(0);
    const view = JSON.parse(rotated.output) as WebhookView;
    const window = Date.parse(view.previousSecretUntil!) - Date.now();
    expect(window).toBeGreaterThan(23 * 3600_000);
    expect(window).toBeLessThanOrEqual(24 * 3600_000);
    expect(rotated.output).not.toContain(NEW_SECRET);

    const during = (await ping(hook.id)).got;
    expect(during.headers['x-switchyard-signature-256']).toBe(sign(NEW_SECRET, during.raw));
    expect(during.headers['x-switchyard-signature-256-previous']).toBe(sign(OLD_SECRET, during.raw));
    expect(during.verifiedWith).toEqual([OLD_SECRET, NEW_SECRET]);

    // A short window, over: the old secret (now NEW_SECRET) no longer signs.
    const short = await admin<WebhookView>('POST', `/webhooks/${hook.id}/secret`, {
      secret: NEWEST_SECRET,
      previousValidForMs: 1_500,
    });
    expect(short.status, short.text).toBe(200);
    expect(short.text).not.toContain(NEWEST_SECRET);
    expect((await ping(hook.id)).got.verifiedWith).toEqual([NEW_SECRET, NEWEST_SECRET]);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const after = (await ping(hook.id)).got;
    expect(after.verifiedWith).toEqual([NEWEST_SECRET]);
    expect(after.headers['x-switchyard-signature-256-previous']).toBeUndefined();
    const listed = (await admin<WebhookView[]>('GET', '/webhooks')).json.find((item) => item.id === hook.id);
    expect(listed).not.toHaveProperty('previousSecretUntil');

    const tooLong = await cli([
      'webhook',
      'rotate-secret',
      hook.id,
      '--secret-file',
      newFile,
      '--window',
      '8d',
    ]);
    expect(tooLong.code, tooLong.output).toBe(2);
    expect(tooLong.output).toMatch(/--window must be a duration from 0 to 7d/);
    const audit = await admin<{ items: { action: string; detail: object }[] }>(
      'GET',
      `/audit?action=webhook.rotate-secret&target=${hook.id}`,
    );
    expect(audit.json.items).toHaveLength(2);
    expect(JSON.stringify(audit.json)).not.toMatch(/lifecycle-(new|newest)-secret/);
  }, 60_000);

  it('only an admin edits, rotates, pings, shows and redelivers', async () => {
    const hook = await addHook();
    for (const [method, path, body] of [
      ['POST', `/webhooks/${hook.id}`, { active: false }],
      ['POST', `/webhooks/${hook.id}/secret`, { secret: 'viewer-secret' }],
      ['POST', `/webhooks/${hook.id}/ping`, {}],
      ['GET', '/webhooks/deliveries/x', undefined],
      ['POST', '/webhooks/deliveries/x/redeliver', {}],
    ] as const) {
      const refused = await call(api, method, `${P}${path}`, {
        token: viewerToken,
        ...(body !== undefined ? { body } : {}),
      });
      expect(expectProblem(refused, 403).detail).toMatch(/admin/);
    }
  });
});
