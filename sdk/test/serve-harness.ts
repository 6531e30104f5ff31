// Shared by the serve() tests: a fixture manifest and handler with fixed
// times (so responses are exact), and a way to run serve() in-process over
// PassThrough streams.
import { PassThrough } from 'node:stream';
import { MANIFEST_SCHEMA_VERSION, PROTOCOL_VERSION } from '../src/constants.js';
import type { Manifest } from '../src/schemas.js';
import { PluginError, serve, type PluginHandler } from '../src/serve.js';

export const FIXED_TIME = '2026-12-02T15:04:05Z';

export const FULL_MANIFEST: Manifest = {
  schemaVersion: MANIFEST_SCHEMA_VERSION,
  id: 'golden-fixture',
  name: 'Golden fixture',
  version: '2.3.4',
  protocolVersion: PROTOCOL_VERSION,
  executable: 'bin/golden-fixture',
  arguments: ['--golden'],
  capabilities: ['project.inspect', 'project.operate'],
  requestedScopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
};

export const INSPECT_ONLY_MANIFEST: Manifest = {
  schemaVersion: MANIFEST_SCHEMA_VERSION,
  id: 'golden-inspect-only',
  name: 'Golden inspect-only fixture',
  version: '0.0.1',
  protocolVersion: PROTOCOL_VERSION,
  executable: 'golden-inspect-only',
  capabilities: ['project.inspect'],
  requestedScopes: ['project.metadata.read'],
};

export const MANIFESTS: Record<string, Manifest> = {
  full: FULL_MANIFEST,
  'inspect-only': INSPECT_ONLY_MANIFEST,
};

/**
 * The handler's behaviour is chosen by the request: plugin.health by the
 * session's hostVersion, project.inspect by project.id, project.operate by action.
 */
export const fixtureHandler: PluginHandler = {
  health(context) {
    switch (context.hostVersion) {
      case 'health-invalid-status':
        return { status: 'fine' as never, checkedAt: FIXED_TIME };
      case 'health-default-time':
        return { status: 'healthy' };
      case 'health-throws':
        throw new Error('health probe exploded');
      default:
        return { status: 'degraded', message: 'disk 91% full', checkedAt: FIXED_TIME };
    }
  },
  inspect({ project }, context) {
    const summary = `${project.displayName}: root ${project.root ?? '(not sent)'}; granted ${context.grantedScopes.join(',') || '(none)'}`;
    switch (project.id) {
      case 'nulls':
        return { summary, facts: null, actions: null, warnings: null, observedAt: FIXED_TIME };
      case 'omits':
        return { summary, observedAt: FIXED_TIME };
      case 'default-time':
        return { summary };
      case 'invalid-shape':
        return {
          summary,
          facts: [{ id: 'fact.1', label: 'Fact', value: 'v', source: 's', confidence: 1 } as never],
          observedAt: FIXED_TIME,
        };
      case 'null':
        return null as never;
      case 'invalid-time':
        return { summary, observedAt: 'yesterday' };
      case 'throws':
        throw new Error('inventory service unreachable');
      case 'throws-long':
        throw new PluginError(`long failure ${'x'.repeat(4_987)}`);
      default:
        return {
          summary,
          facts: [
            { id: 'lang', label: 'Language', value: 'TypeScript', source: 'package.json' },
            { id: 'lock', label: 'Lock file', value: 'missing', source: 'fs', warning: 'no lock file' },
          ],
          actions: [{ id: 'fixture.echo', name: 'Echo', description: 'Returns its input.', risk: 'none' }],
          warnings: ['root is a fixture'],
          observedAt: FIXED_TIME,
        };
    }
  },
  operate({ action, input }) {
    switch (action) {
      case 'echo':
        return { status: 'succeeded', summary: 'echoed', output: input };
      case 'no-output':
        return { status: 'partially_succeeded', summary: 'nothing to return' };
      case 'invalid-status':
        return { status: 'done' as never, summary: 'done', output: null };
      case 'throws':
        throw new PluginError('action failed: disk full');
      default:
        return { status: 'failed', summary: `unknown action ${action}`, output: null };
    }
  },
};

/** Runs one serve() session over `chunks`, returns its output split into lines (without the newlines). */
export async function runServe(
  manifest: Manifest,
  handler: PluginHandler,
  chunks: Iterable<Buffer>,
): Promise<{ lines: string[]; raw: Buffer }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const received: Buffer[] = [];
  output.on('data', (chunk: Buffer) => received.push(chunk));
  const served = serve(manifest, handler, { input, output });
  (async () => {
    for (const chunk of chunks) {
      if (!input.write(chunk)) await new Promise((resolve) => input.once('drain', resolve));
    }
    input.end();
  })().catch((error: unknown) => input.destroy(error as Error));
  await served;
  output.end();
  const raw = Buffer.concat(received);
  const text = raw.toString('utf8');
  if (text !== '' && !text.endsWith('\n')) throw new Error('serve() output does not end with a newline');
  const lines = text === '' ? [] : text.slice(0, -1).split('\n');
  return { lines, raw };
}
