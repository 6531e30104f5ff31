// Local mode's in-process api (src/api/in-process.ts, src/cli/in-process-transport.ts):
// the local OS user's identity is given to injected requests only. The same app
// made to listen, and the HTTP api on the same Redis, refuse every request over
// a connection that has no token, whatever it sends; the in-process transport
// raises the core's own errors and acts as the local user in the audit log.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInProcessApi, type InProcessApi } from '../../src/api/in-process.js';
import { buildApi } from '../../src/api/server.js';
import { apiBackend } from '../../src/cli/api-backend.js';
import { InProcessTransport } from '../../src/cli/in-process-transport.js';
import { useRuntimeSuite } from '../support/runtime-suite.js';

const { runtime } = useRuntimeSuite('in-process');
const ACTOR = 'user:tester@in-process-test';
/** What a client might send to pass for the local user. */
const CLAIMS: Record<string, string>[] = [
  {},
  { authorization: 'Bearer local' },
  { 'x-switchyard-actor': ACTOR, 'x-forwarded-user': 'tester' },
  { _lightmyrequest: 'true', 'user-agent': 'lightMyRequest' },
];

let inProcess: InProcessApi;

beforeAll(async () => {
  inProcess = await buildInProcessApi(runtime(), ACTOR);
});

afterAll(async () => {
  await inProcess.app.close();
});

describe('the in-process api', () => {
  it('answers an injected request as the local user, with admin authority', async () => {
    const created = await inProcess.app.inject({
      method: 'POST',
      url: '/api/v1/tokens',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'made-in-process', role: 'viewer' }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const audit = await runtime().audit.query({ limit: 10 }, { role: 'admin' });
    expect(audit.items.find((entry) => entry.action.startsWith('token.'))?.actor).toBe(ACTOR);
  });

  it('refuses the same routes over a connection, whatever the request claims (401)', async () => {
    const address = await inProcess.app.listen({ host: '127.0.0.1', port: 0 });
    for (const headers of CLAIMS) {
      const response = await fetch(`${address}/api/v1/tokens`, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
    }
    expect((inProcess.app.server.address() as AddressInfo).port).toBeGreaterThan(0);
  });

  it('is not what the HTTP api does: it knows bearer tokens only', async () => {
    const api = await buildApi(runtime());
    try {
      const address = await api.listen({ host: '127.0.0.1', port: 0 });
      for (const headers of CLAIMS) {
        const response = await fetch(`${address}/api/v1/tokens`, { headers });
        expect(response.status, JSON.stringify(headers)).toBe(401);
      }
    } finally {
      await api.close();
    }
  });
});

describe('the in-process transport', () => {
  it("raises the core's own error, as local mode always did", async () => {
    const transport = new InProcessTransport(runtime(), ACTOR);
    try {
      const failed = await apiBackend(transport)
        .plugins.show('no-such-plugin')
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect((failed as Error).constructor.name).not.toBe('RemoteProblemError');
      expect((failed as Error).message).toMatch(/unknown plugin "no-such-plugin"/);
    } finally {
      await transport.close();
    }
  });
});
