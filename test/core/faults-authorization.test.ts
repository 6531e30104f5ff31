// Part of the fault matrix of the host core (test/support/fault-suite.ts), against
// a real Redis and real processes: authorization faults are the caller's, not
// the plugin's: an untrusted project or a missing grant is refused before
// anything is spawned and leaves the plugin healthy.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PermissionDeniedError, ProjectUntrustedError } from '../../src/core/platform/errors.js';
import { ACTOR, useFaultSuite } from '../support/fault-suite.js';

const faults = useFaultSuite('faults-authorization');
const { readyFault, observe, inspect, record } = faults;

describe('authorization faults are the caller’s, not the plugin’s', () => {
  it('an untrusted project: PROJECT_UNTRUSTED, nothing spawned, the plugin not marked unhealthy', async () => {
    const pkg = {
      id: 'fault-good',
      dir: join(faults.dataDir, 'plugins', 'fault-good'),
      executable: 'fault-plugin.mjs',
    };
    const observed = await observe(pkg, inspect(pkg, 'shadow'));
    record('untrusted project', observed);
    expect(observed.error).toBeInstanceOf(ProjectUntrustedError);
    expect(observed.error).toMatchObject({ code: 'PROJECT_UNTRUSTED' });
    expect(observed.spawned).toEqual([]);
    expect(observed.newPidFiles).toEqual([]);
    expect(observed.detail.health).toBe('healthy');
  });

  it('root is withheld with only project.metadata.read and given with project.files.read', async () => {
    const pkg = await readyFault('good', { id: 'fault-root', scopes: ['project.metadata.read'], arm: false });
    const rootFact = async () => {
      const result = await faults.core.plugins.inspect(pkg.id, 'demo');
      return result.facts.find((fact) => fact.id === 'root.received')?.value;
    };
    expect(await rootFact()).toBe('no');

    const denied = await observe(pkg, (options) =>
      faults.core.plugins.operate(pkg.id, 'demo', 'touch', {}, options),
    );
    record('operate without the project.operate grant', denied);
    expect(denied.error).toBeInstanceOf(PermissionDeniedError);
    expect(denied.error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(denied.spawned).toEqual([]);
    expect(denied.detail.health).toBe('healthy');

    await faults.core.plugins.enable(pkg.id, ['project.metadata.read', 'project.files.read'], ACTOR);
    expect(await rootFact()).toBe(`yes: ${faults.projectRoot}`);
  });
});
