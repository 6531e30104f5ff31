// One plugin call's processes as the supervisor sees them, whichever mechanism starts them: the
// native helper (helper-call.ts) or a process group (containment.ts).
import type { LimitName } from './helper-frames.js';
import type { CallInput, CallOutput } from './relayed-stdio.js';

export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/** One plugin process, whichever mechanism starts it. */
export interface CallProcess {
  /** Resolves once the process runs (pid set); rejects with SpawnError when it cannot start. */
  started: Promise<void>;
  /** Set once started. */
  pid: number;
  stdin: CallInput;
  stdout: CallOutput;
  stderr: CallOutput;
  /** The leader's exit (code or signal name). */
  exited: Promise<ProcessExit>;
  /** Kills every process of the call; resolves once none of them runs. */
  end(): Promise<void>;
  /** The resource limits the call hit, known once end() resolved (native helper only). */
  limitsHit?: LimitName[];
  /**
   * The next write to stdin is the last: stdin is closed as soon as stdout has
   * given `answers` lines in all, the moment the host would close it on reading
   * the last answer, without a round trip for it (native helper only).
   */
  closeStdinAfterAnswers?(answers: number): void;
  /**
   * `request` is written to stdin, as the last write (see closeStdinAfterAnswers), the moment the
   * plugin's first stdout line is exactly `firstLine`, and never otherwise; `sentAhead` says it was,
   * before that line reaches stdout's reader (native helper only).
   */
  sendAfterFirstLine?(firstLine: Buffer, request: Buffer, answers: number): void;
  readonly sentAhead?: boolean;
}

export class SpawnError extends Error {}
