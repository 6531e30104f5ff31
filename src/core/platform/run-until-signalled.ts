// "Run until signalled", shared by the three process entry points (api,
// worker, scheduler). SIGINT / SIGTERM start an orderly stop bounded by a
// deadline; the same signal again, or the deadline passing, ends the process at once.
// A process started by `switchyard up` has an IPC channel to it: the channel
// closing means `up` is gone (even by SIGKILL, the kernel closes its end), and
// is treated like SIGTERM, so no child outlives its `up`.
import type { Logger } from 'pino';

export interface Service {
  stop(): Promise<void>;
  /** Sent to the parent (`up`) once started, e.g. the address the api listens on. */
  ready?: Record<string, unknown>;
}

export interface RunOptions {
  logger: Logger;
  /** How long the orderly stop may take before the process exits anyway. */
  deadlineMs: number;
  /**
   * The same when the parent `up` is gone: it was killed, its embedded Redis
   * went with it, so there is little to finish and its children must not linger.
   */
  parentGoneDeadlineMs?: number;
}

/** The message a child sends its parent once its service runs. */
export interface ReadyMessage {
  type: 'switchyard-ready';
  [key: string]: unknown;
}

export async function runUntilSignalled(
  start: () => Promise<Service>,
  { logger, deadlineMs, parentGoneDeadlineMs = 3_000 }: RunOptions,
): Promise<void> {
  let reason: string | undefined;
  let wake: (why: string) => void = () => {};
  const stopRequested = new Promise<string>((resolve) => (wake = resolve));
  const received = new Set<string>();
  const request = (why: string) => {
    if (reason !== undefined) {
      // The same signal twice (Ctrl-C again) forces; a terminal's SIGINT to the
      // whole group followed by `up`'s SIGTERM is one request, not two.
      if (received.has(why) && why !== 'parent-gone') {
        logger.warn({ event: 'shutdown-forced', signal: why }, 'second signal: exiting now');
        process.exit(130);
      }
      received.add(why);
      return;
    }
    received.add(why);
    reason = why;
    const bound = why === 'parent-gone' ? Math.min(deadlineMs, parentGoneDeadlineMs) : deadlineMs;
    logger.info({ event: 'shutdown', signal: why }, 'shutdown');
    // Bounded: a stop that hangs (e.g. on an unreachable Redis) must not keep the process.
    setTimeout(() => {
      logger.error(
        { event: 'shutdown-deadline', deadlineMs: bound },
        'orderly stop overran its deadline; exiting',
      );
      process.exit(1);
    }, bound).unref();
    wake(why);
  };
  const onSigterm = () => request('SIGTERM');
  const onSigint = () => request('SIGINT');
  const onParentGone = () => request('parent-gone');
  process.on('SIGTERM', onSigterm);
  process.on('SIGINT', onSigint);
  if (process.send) {
    // The channel must not keep the loop alive by itself; 'disconnect' still fires.
    process.channel?.unref();
    process.once('disconnect', onParentGone);
  }
  try {
    // A stop requested during start-up waits for the start (inside the deadline).
    const service = await start();
    if (reason === undefined && process.send && process.connected)
      process.send({ type: 'switchyard-ready', ...service.ready } satisfies ReadyMessage);
    await stopRequested;
    try {
      await service.stop();
    } catch (error) {
      // Expected when `up` died with its embedded Redis: nothing left to report to.
      if (reason !== 'parent-gone') throw error;
      logger.warn(
        { event: 'stop-incomplete', err: error },
        'the parent up is gone (and its Redis with it); stopped without closing cleanly',
      );
    }
    logger.info({ event: 'stopped' }, 'stopped');
  } finally {
    process.off('SIGTERM', onSigterm);
    process.off('SIGINT', onSigint);
    process.off('disconnect', onParentGone);
    if (process.connected) process.disconnect();
  }
}
