// The short table the multi-host and Sentinel suites print for each run
// per host, jobs served, and the run's losses, which must be 0.
export interface HostRow {
  host: string;
  jobsServed: number;
}

export interface RunTotals {
  partitions: number;
  failovers: number;
  projectsLost: number;
  operationsLost: number;
  duplicateMutations: number;
}

export function runTable(title: string, hosts: HostRow[], totals: RunTotals, extra: string[] = []): string {
  const width = Math.max(4, ...hosts.map((row) => row.host.length));
  const lines = [
    `── ${title}`,
    `${'host'.padEnd(width)}  jobs served`,
    ...hosts.map((row) => `${row.host.padEnd(width)}  ${row.jobsServed}`),
    `partitions ${totals.partitions} · failovers ${totals.failovers} · projects lost ${totals.projectsLost} · ` +
      `operations lost ${totals.operationsLost} · duplicate mutations ${totals.duplicateMutations}`,
    ...extra,
  ];
  return lines.join('\n');
}
