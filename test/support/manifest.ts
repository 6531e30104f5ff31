// The minimal valid manifest the discovery tests install (one inspect
// capability, metadata scope, executable `run`); `extra` overrides fields.
export const testManifest = (id: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    schemaVersion: 'switchyard.plugin-manifest/v1',
    id,
    name: `Plugin ${id}`,
    version: '1.0.0',
    protocolVersion: 'switchyard.plugin/v1',
    executable: 'run',
    capabilities: ['project.inspect'],
    requestedScopes: ['project.metadata.read'],
    ...extra,
  });
