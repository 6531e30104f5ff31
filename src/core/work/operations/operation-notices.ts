// The webhook event an operation's end produces: `operation.finished` with
// its view (state, error, redacted result; never its input), once per operation whichever
// worker saw the end.
import type { Notices } from '../notify/index.js';
import { isTerminal, toOperationView, type OperationStore } from './operation-store.js';

export async function announceOperationEnd(
  store: OperationStore,
  notices: Notices,
  operationId: string,
): Promise<void> {
  const record = await store.get(operationId);
  if (!record || !isTerminal(record.state)) return;
  // The input stays home: a webhook's receiver is outside, and needs only how it ended.
  const { input: _input, ...operation } = toOperationView(record);
  await notices.publish(
    'operation.finished',
    { operation },
    { key: operation.id, pluginId: operation.pluginId },
  );
}
