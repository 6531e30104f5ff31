// Two runs of one schedule at the same moment (a scheduler restarted beside the
// old one, a manual run beside the timer) never both decide: one runs, the
// other skips, and only one outcome is recorded.
import { describe, expect, it } from 'vitest';
import { useRuntimeSuite } from '../support/runtime-suite.js';

const suite = useRuntimeSuite('guard');

describe('one run of a schedule at a time', () => {
  it('two runs at once: one decides (here: it fails, the plugin is gone), the other skips', async () => {
    const runtime = suite.runtime();
    // Stored directly: the plugin it names no longer exists, so each run that decides fails (schedule.failed).
    const schedule = await runtime.schedules.store.add(
      { pluginId: 'gone-plugin', projects: 'all', everyMs: 3_600_000, name: 'raced' },
      'user:test',
      runtime.queues,
      60_000,
    );
    const outcomes = await Promise.all([
      runtime.schedules.run(schedule.id, 'worker:a'),
      runtime.schedules.run(schedule.id, 'worker:b'),
    ]);
    expect(outcomes.filter((outcome) => 'failed' in outcome)).toHaveLength(1);
    expect(
      outcomes.filter((outcome) => outcome.skipped === 'another run of this schedule is starting'),
    ).toHaveLength(1);
    // The guard is released: the next run decides again.
    expect(await runtime.schedules.run(schedule.id, 'worker:a')).toHaveProperty('failed');
  });
});
