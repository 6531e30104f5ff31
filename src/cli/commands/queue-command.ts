// switchyard queue: what waits and what runs, per requester, batch or
// operation and worker slot (docs/CLI.md; the core's queue-view.ts).
import type { Command } from 'commander';
import type { QueueView } from '../../core/work/upkeep/index.js';
import { withBackend } from '../command-context.js';
import { ago, printJson, printTable, say } from '../output.js';

export function registerQueueCommand(program: Command): void {
  program
    .command('queue')
    .description(
      'what waits and runs: per requester and batch or operation (waiting, running, share), per worker slot (what it runs, since when, when it last took work)',
    )
    .addHelpText(
      'after',
      "\nA call held back by its plugin's caps (plugin set --max-concurrency/--rate) shows as waiting, with why.\n\nExamples:\n  switchyard queue\n  switchyard queue --json",
    )
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const view = await backend.queue();
        if (config.json) return printJson(view);
        printQueue(view);
      }),
    );
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

function printQueue(view: QueueView): void {
  const work = view.requesters.flatMap((requester) => requester.work);
  if (work.length === 0) say('nothing waits or runs');
  else {
    say(`work (${view.running} calls running now):`);
    printTable(
      ['REQUESTER', 'KIND', 'ID', 'PLUGIN', 'WAITING', 'RUNNING', 'SHARE', 'NOTE'],
      view.requesters.flatMap((requester) => [
        [
          requester.requester,
          '(all)',
          '',
          '',
          String(requester.waiting),
          String(requester.running),
          percent(requester.share),
          '',
        ],
        ...requester.work.map((item) => [
          '',
          item.kind,
          item.id,
          item.pluginId,
          String(item.waiting),
          String(item.running),
          percent(item.share),
          item.waitingForCaps > 0 ? `${item.waitingForCaps} held back: ${item.reason ?? 'caps'}` : '',
        ]),
      ]),
    );
  }
  say('');
  if (view.workers.length === 0) return say('workers: none reported (start one: switchyard worker)');
  say('workers:');
  printTable(
    ['WORKER', 'SLOT', 'STATE', 'PLUGIN', 'KIND', 'PROJECT', 'SINCE', 'LAST TOOK WORK'],
    view.workers.flatMap((worker) =>
      worker.slots.length === 0
        ? [[worker.worker, '-', 'idle', '', '', '', '', 'never']]
        : worker.slots.map((slot) => [
            worker.worker,
            String(slot.slot),
            slot.state === 'waiting' ? (slot.reason ?? 'waiting') : slot.state,
            slot.pluginId ?? '',
            slot.kind ?? '',
            slot.projectId ?? '',
            ago(slot.since) ?? '',
            ago(slot.lastTookAt) ?? 'never',
          ]),
    ),
  );
}
