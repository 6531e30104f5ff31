// An inspection's warnings reach every place a person reads results: the
// CLI's results table (⚠ after the summary), the CSV export (`warnings`) and
// JSON; none is dropped.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { PLUGIN_ID, runCli, startWorker } from '../support/workers.js';

const suite = useQueueSuite('warnings shown');

describe('inspection warnings', () => {
  it('are in the table, the CSV and the JSON', async () => {
    const installation = await suite.install('warnings');
    const root = await installation.addProject('shop');
    await installation.addProject('blog');
    await writeFile(join(root, 'inspect-warning'), 'the lock file is 3 years old\n');
    await startWorker(installation, { concurrency: 2 });

    const table = await runCli(installation, ['inspect', PLUGIN_ID, '--all'], { json: false });
    expect(table.code, table.stderr).toBe(0);
    const shopRow = table.stdout.split('\n').find((line) => line.startsWith('shop '));
    expect(shopRow, table.stdout).toContain('⚠ the lock file is 3 years old');
    expect(table.stdout.split('\n').find((line) => line.startsWith('blog '))).not.toContain('⚠');

    const csv = await runCli(installation, ['batch', 'export', 'latest', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const [header, ...rows] = csv.stdout.trimEnd().split('\n');
    const column = header!.split(',').indexOf('warnings');
    expect(column).toBeGreaterThan(0);
    const shop = rows.filter((row) => row.includes(',shop,'));
    expect(shop.length).toBeGreaterThan(0);
    for (const row of shop) expect(row.split(',')[column]).toBe('the lock file is 3 years old');

    const json = await runCli(installation, ['batch', 'show', 'latest']);
    const results = (
      JSON.parse(json.stdout) as { results: { projectId: string; result: { warnings: string[] } }[] }
    ).results;
    expect(results.find((result) => result.projectId === 'shop')!.result.warnings).toEqual([
      'the lock file is 3 years old',
    ]);
  }, 120_000);
});
