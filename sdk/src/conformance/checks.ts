// The protocol checks of the conformance kit, each on a fresh plugin process.
// `required` checks are what a host needs; `strict` ones are the TypeScript
// SDK's extra strictness (see run.ts).
import { ERROR_CODES, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, SCOPES, type Scope } from '../constants.js';
import { identityOf } from '../manifest.js';
import { identityProblems } from '../identity.js';
import { describeIssues, methodSchemas, type Manifest, REPORT_INPUT } from '../schemas.js';
import { Probe, type Reply } from './probe.js';

export type CheckLevel = 'required' | 'strict';

export class CheckFailed extends Error {}
export class CheckSkipped extends Error {}

function expect(condition: unknown, detail: string): asserts condition {
  if (!condition) throw new CheckFailed(detail);
}

export type Runner = (name: string, body: () => Promise<void>, level?: CheckLevel) => Promise<void>;

/** What the kit sends as `hostVersion`: `<host>/<version>`, as a host does (PROTOCOL §7). */
const KIT_HOST_VERSION = 'switchyard-conformance/0.1.0';

/** The one risk that says an action changes nothing (trimmed, any case), as the host's run form reads it. */
export const HARMLESS_RISK = 'none';
const isHarmless = (risk: string) => risk.trim().toLowerCase() === HARMLESS_RISK;

export interface ProtocolCheckOptions {
  timeoutMs: number;
  /** The listed action the operate check runs for real; default: the first whose risk is `none`. */
  action?: string | undefined;
}

export async function runProtocolChecks(
  manifest: Manifest,
  packageDir: string,
  executablePath: string,
  projectRoot: string,
  { timeoutMs, action: chosenAction }: ProtocolCheckOptions,
  run: Runner,
): Promise<void> {
  const requested = manifest.requestedScopes;
  const declares = (capability: string) => (manifest.capabilities as string[]).includes(capability);
  const project = { id: 'conformance-project', displayName: 'Conformance project' };

  let errorsWithResult = 0;
  /** A fresh process per check, always stopped (process group killed) at the end. */
  const withProbe = async (body: (probe: Probe) => Promise<void>) => {
    const probe = new Probe(executablePath, manifest.arguments ?? [], packageDir, timeoutMs);
    try {
      await body(probe);
    } finally {
      errorsWithResult += probe.errorsWithResult;
      await probe.stop();
    }
  };
  const initialize = async (probe: Probe, grantedScopes: readonly Scope[], id = 1) => {
    const reply = await probe.call(id, 'initialize', {
      protocolVersion: PROTOCOL_VERSION,
      hostVersion: KIT_HOST_VERSION,
      grantedScopes,
    });
    expectResult(reply, id, 'initialize');
  };

  await run('initialize negotiates the protocol and echoes the exact identity', () =>
    withProbe(async (probe) => {
      const reply = await probe.call(1, 'initialize', {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: KIT_HOST_VERSION,
        grantedScopes: requested,
      });
      const result = expectResult(reply, 1, 'initialize');
      const problems = identityProblems(result, identityOf(manifest), requested);
      expect(problems.length === 0, `identity differs from plugin.json: ${problems.join('; ')}`);
    }),
  );

  // A host grants a subset of what was asked; a plugin that echoes more than it got fails its first call.
  await run('initialize with a strict subset of the requested scopes echoes exactly that subset', () =>
    withProbe(async (probe) => {
      const subset = requested.slice(0, -1);
      const reply = await probe.call(1, 'initialize', {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: KIT_HOST_VERSION,
        grantedScopes: subset,
      });
      const echoed = [...expectResult(reply, 1, 'initialize').grantedScopes].sort();
      expect(
        JSON.stringify(echoed) === JSON.stringify([...subset].sort()),
        `granted ${JSON.stringify(subset)} but the plugin echoed ${JSON.stringify(echoed)}`,
      );
    }),
  );

  await run('initialize with another protocol version → -32001', () =>
    withProbe(async (probe) => {
      const reply = await probe.call(1, 'initialize', {
        protocolVersion: 'switchyard.plugin/v0',
        hostVersion: KIT_HOST_VERSION,
        grantedScopes: [],
      });
      expectError(reply, 1, ERROR_CODES.protocolMismatch);
    }),
  );

  await run('plugin.health answers a valid result', () =>
    withProbe(async (probe) => {
      await initialize(probe, requested);
      expectResult(await probe.call(2, 'plugin.health', {}), 2, 'plugin.health');
    }),
  );

  const inspects = declares('project.inspect');
  await run('project.inspect with project.files.read receives root and answers a valid result', () => {
    if (!inspects) throw new CheckSkipped('plugin does not declare project.inspect');
    if (!requested.includes('project.files.read'))
      throw new CheckSkipped('plugin does not request project.files.read');
    return withProbe(async (probe) => {
      await initialize(probe, ['project.metadata.read', 'project.files.read']);
      expectResult(
        await probe.call(2, 'project.inspect', { project: { ...project, root: projectRoot } }),
        2,
        'project.inspect',
      );
    });
  });

  await run('project.inspect without project.files.read answers (a result or an application error)', () => {
    if (!inspects) throw new CheckSkipped('plugin does not declare project.inspect');
    return withProbe(async (probe) => {
      await initialize(probe, ['project.metadata.read']);
      const reply = await probe.call(2, 'project.inspect', { project });
      if (reply.kind === 'error') expectError(reply, 2, ERROR_CODES.applicationError);
      else expectResult(reply, 2, 'project.inspect');
    });
  });

  await run('root sent without project.files.read → -32003', () => {
    if (!inspects) throw new CheckSkipped('plugin does not declare project.inspect');
    return withProbe(async (probe) => {
      await initialize(probe, ['project.metadata.read']);
      expectError(
        await probe.call(2, 'project.inspect', { project: { ...project, root: projectRoot } }),
        2,
        ERROR_CODES.permissionDenied,
      );
    });
  });

  await run('a declared capability whose scope is not granted → -32003', () =>
    withProbe(async (probe) => {
      if (inspects) {
        await initialize(
          probe,
          requested.filter((scope) => scope !== 'project.metadata.read'),
        );
        expectError(await probe.call(2, 'project.inspect', { project }), 2, ERROR_CODES.permissionDenied);
      } else {
        await initialize(
          probe,
          requested.filter((scope) => scope !== 'project.operate'),
        );
        expectError(
          await probe.call(2, 'project.operate', { project, action: 'conformance.noop', input: {} }),
          2,
          ERROR_CODES.permissionDenied,
        );
      }
    }),
  );

  const operates = declares('project.operate');
  const withRoot = requested.includes('project.files.read') ? { ...project, root: projectRoot } : project;
  // Runs the action for real (input {}), so never one that may change something unless named.
  await run(
    'project.operate runs a listed action whose risk is none, or the one --action names (a result or an application error)',
    async () => {
      if (!operates) throw new CheckSkipped('plugin does not declare project.operate');
      if (!inspects)
        throw new CheckSkipped('plugin does not declare project.inspect, which lists the actions');
      let listed: { id: string; risk: string }[] = [];
      await withProbe(async (probe) => {
        await initialize(probe, requested);
        listed = expectResult(
          await probe.call(2, 'project.inspect', { project: withRoot }),
          2,
          'project.inspect',
        ).actions;
      });
      const ids = listed.map((entry) => entry.id);
      let action: string | undefined;
      if (chosenAction !== undefined) {
        expect(
          ids.includes(chosenAction),
          `--action ${chosenAction}: project.inspect does not list it (it lists ${ids.length === 0 ? 'no action' : ids.join(', ')})`,
        );
        action = chosenAction;
      } else {
        if (listed.length === 0) throw new CheckSkipped('project.inspect lists no action');
        action = listed.find((entry) => isHarmless(entry.risk))?.id;
        if (action === undefined)
          throw new CheckSkipped(
            `no listed action has risk "none", and one that may change something is never run unasked: pass --action <id> to run one of ${ids.join(', ')} for real`,
          );
      }
      await withProbe(async (probe) => {
        await initialize(probe, requested);
        const reply = await probe.call(2, 'project.operate', { project: withRoot, action, input: {} });
        if (reply.kind === 'error') expectError(reply, 2, ERROR_CODES.applicationError);
        else expectResult(reply, 2, 'project.operate');
      });
    },
  );

  await run('project.operate with an unknown action → -32000', () => {
    if (!operates) throw new CheckSkipped('plugin does not declare project.operate');
    return withProbe(async (probe) => {
      await initialize(probe, requested);
      expectError(
        await probe.call(2, 'project.operate', {
          project: withRoot,
          action: 'conformance.no-such-action',
          input: {},
        }),
        2,
        ERROR_CODES.applicationError,
      );
    });
  });

  await run('project.operate without the project.operate grant → -32003', () => {
    if (!operates) throw new CheckSkipped('plugin does not declare project.operate');
    return withProbe(async (probe) => {
      await initialize(
        probe,
        requested.filter((scope) => scope !== 'project.operate'),
      );
      expectError(
        await probe.call(2, 'project.operate', { project, action: 'conformance.noop', input: {} }),
        2,
        ERROR_CODES.permissionDenied,
      );
    });
  });

  await run('a capability the manifest does not declare → -32003', () => {
    const missing = (['project.inspect', 'project.operate'] as const).find(
      (capability) => !declares(capability),
    );
    if (!missing) throw new CheckSkipped('plugin declares every capability');
    return withProbe(async (probe) => {
      await initialize(probe, requested);
      const params =
        missing === 'project.inspect' ? { project } : { project, action: 'conformance.noop', input: {} };
      expectError(await probe.call(2, missing, params), 2, ERROR_CODES.permissionDenied);
    });
  });

  await run('a granted scope the manifest did not request → -32003', () => {
    const undeclared = SCOPES.find((scope) => !requested.includes(scope));
    if (!undeclared) throw new CheckSkipped('plugin requests every scope');
    return withProbe(async (probe) => {
      const reply = await probe.call(1, 'initialize', {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: KIT_HOST_VERSION,
        grantedScopes: [undeclared],
      });
      expectError(reply, 1, ERROR_CODES.permissionDenied);
    });
  });

  await run('a call before initialize → -32002', () =>
    withProbe(async (probe) => {
      expectError(await probe.call(1, 'plugin.health', {}), 1, ERROR_CODES.notInitialized);
    }),
  );

  await run('a second initialize → -32002', () =>
    withProbe(async (probe) => {
      await initialize(probe, requested);
      const reply = await probe.call(2, 'initialize', {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: KIT_HOST_VERSION,
        grantedScopes: requested,
      });
      expectError(reply, 2, ERROR_CODES.notInitialized);
    }),
  );

  await run('a line that is not JSON → -32700 with id null, then it keeps serving', () =>
    withProbe(async (probe) => {
      probe.send('this is not json');
      expectError(await probe.receive(), null, ERROR_CODES.parseError);
      await initialize(probe, requested, 7);
    }),
  );

  await run('an unknown envelope field → -32700 with id null', () =>
    withProbe(async (probe) => {
      probe.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'plugin.health', params: {}, extra: true }));
      expectError(await probe.receive(), null, ERROR_CODES.parseError);
    }),
  );

  await run(
    `a request line over ${MAX_MESSAGE_BYTES} bytes → -32700, then it keeps serving`,
    () =>
      withProbe(async (probe) => {
        probe.send(
          `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${'x'.repeat(MAX_MESSAGE_BYTES)}"}}`,
        );
        expectError(await probe.receive(), null, ERROR_CODES.parseError);
        await initialize(probe, requested, 2);
      }),
    'strict',
  );

  await run(
    'an empty line → -32700 with id null, then it keeps serving',
    () =>
      withProbe(async (probe) => {
        probe.send('');
        // The next request shows whether the empty line got its own answer.
        probe.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'initialize',
            params: {
              protocolVersion: PROTOCOL_VERSION,
              hostVersion: KIT_HOST_VERSION,
              grantedScopes: requested,
            },
          }),
        );
        const first = await probe.receive();
        expect(first.kind !== 'result', 'the empty line got no answer (the next request was answered first)');
        expectError(first, null, ERROR_CODES.parseError);
        expectResult(await probe.receive(), 2, 'initialize');
      }),
    'strict',
  );

  await run('an unknown method → -32601', () =>
    withProbe(async (probe) => {
      await initialize(probe, requested);
      expectError(await probe.call(2, 'project.delete', {}), 2, ERROR_CODES.methodNotFound);
    }),
  );

  await run(
    'an unknown params field → -32602',
    () =>
      withProbe(async (probe) => {
        await initialize(probe, requested);
        expectError(await probe.call(2, 'plugin.health', { unexpected: true }), 2, ERROR_CODES.invalidParams);
      }),
    'strict',
  );

  await run(
    'a granted scope that is no known scope value → -32003',
    () =>
      withProbe(async (probe) => {
        const reply = await probe.call(1, 'initialize', {
          protocolVersion: PROTOCOL_VERSION,
          hostVersion: KIT_HOST_VERSION,
          grantedScopes: ['project.delete'],
        });
        expectError(reply, 1, ERROR_CODES.permissionDenied);
      }),
    'strict',
  );

  await run('large integer ids are echoed exactly', () =>
    withProbe(async (probe) => {
      await initialize(probe, requested, 2_147_483_648);
    }),
  );

  await run('exits within 3 s once stdin closes', async () => {
    const probe = new Probe(executablePath, manifest.arguments ?? [], packageDir, timeoutMs);
    await initialize(probe, requested).catch(async (error: unknown) => {
      await probe.stop(0);
      throw error;
    });
    const { exitedOnItsOwn } = await probe.stop(3_000);
    expect(exitedOnItsOwn, 'still running 3 s after stdin closed (the host would kill it)');
  });

  // Last: it judges every error response the checks above received.
  await run(
    'error responses carry `error` only, no `result` beside it',
    async () => {
      expect(
        errorsWithResult === 0,
        `${errorsWithResult} error response(s) also carried \`result\` (a host lets \`error\` win)`,
      );
    },
    'strict',
  );
}

function expectResult<M extends keyof typeof methodSchemas>(reply: Reply, id: number, method: M) {
  if (reply.kind === 'invalid') throw new CheckFailed(reply.reason);
  if (reply.kind === 'error')
    throw new CheckFailed(`${method} answered error ${reply.error.code}: ${reply.error.message}`);
  expect(reply.id === id, `response id ${JSON.stringify(reply.id)} does not echo request id ${id}`);
  const parsed = methodSchemas[method].result.safeParse(reply.result, REPORT_INPUT);
  if (!parsed.success)
    throw new CheckFailed(`invalid ${method} result: ${describeIssues(parsed.error, 'result').join('; ')}`);
  return parsed.data as ReturnType<(typeof methodSchemas)[M]['result']['parse']>;
}

function expectError(reply: Reply, id: number | null, code: number): void {
  if (reply.kind === 'invalid') throw new CheckFailed(reply.reason);
  if (reply.kind === 'result')
    throw new CheckFailed(
      `expected error ${code}, got a result: ${JSON.stringify(reply.result).slice(0, 200)}`,
    );
  expect(
    reply.error.code === code,
    `expected error ${code}, got ${reply.error.code}: ${reply.error.message}`,
  );
  expect(reply.id === id, `error response id is ${JSON.stringify(reply.id)}, expected ${JSON.stringify(id)}`);
}
