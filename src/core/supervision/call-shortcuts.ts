// The speed-ups of a plugin call, behind this one seam: the pipeline asks here and works the same,
// only slower, when none applies. Each keeps the call's meaning (PROTOCOL §9):
// - initialize answers are kept per trusted identity and grants, by their bytes: the same bytes
//   are parsed once and verified once (the same answer object means the same bytes);
// - the method can leave with the spawn request: the helper sends it the moment the plugin's
//   first line is, byte for byte, an initialize answer already verified against this identity and
//   these grants (the same bytes get the same verdict), and says so before that line reaches the
//   client. Not when something must run between the two (an operation's dispatch mark);
// - the helper closes the plugin's stdin the moment the method's answer arrives (no round trip).
import type { Scope } from '@switchyard/plugin-sdk/protocol';
import { AnswerMemo, type PluginClient } from '@switchyard/plugin-sdk/host';
import type { CallProcess } from './call-process.js';
import type { CallMethod, SupervisedCall, TrustedIdentity } from './call-options.js';

/** The lines a call's stdout gives in all: initialize's answer and the method's. */
const ANSWERS = 2;

interface KnownAnswers {
  memo: AnswerMemo;
  verified: WeakSet<object>;
  /** The bytes of the last initialize answer verified (the helper may send the method on seeing them again). */
  line?: Buffer | undefined;
}

/** Per trusted identity and grants: the initialize answers validated and verified so far. */
const knownByIdentity = new Map<string, KnownAnswers>();

function knownAnswers(identity: TrustedIdentity, grants: readonly Scope[]): KnownAnswers {
  const key = JSON.stringify([
    identity.id,
    identity.name,
    identity.version,
    identity.capabilities,
    identity.requestedScopes,
    grants,
  ]);
  let known = knownByIdentity.get(key);
  if (!known) {
    if (knownByIdentity.size >= 256) knownByIdentity.delete(knownByIdentity.keys().next().value!);
    known = { memo: new AnswerMemo(4), verified: new WeakSet() };
    knownByIdentity.set(key, known);
  }
  return known;
}

/** What one call's steps ask of the speed-ups. */
export class CallShortcuts {
  readonly #known: KnownAnswers;

  constructor(identity: TrustedIdentity, grants: readonly Scope[]) {
    this.#known = knownAnswers(identity, grants);
  }

  /** Where initialize's answer is looked up by its bytes before it is parsed. */
  get initializeMemo(): AnswerMemo {
    return this.#known.memo;
  }

  /** Asks the helper to send the method on a known first line, where it can and nothing must run between. */
  sendMethodAhead<M extends CallMethod>(
    call: SupervisedCall<M>,
    child: CallProcess,
    client: PluginClient,
  ): void {
    const line = this.#known.line;
    if (line && line.length > 0 && !call.beforeSend && child.sendAfterFirstLine)
      child.sendAfterFirstLine(line, Buffer.from(client.nextRequestLine(call.method, call.params)), ANSWERS);
  }

  /** True when this very answer was verified against this identity and these grants before. */
  verifiedBefore(answer: object): boolean {
    return this.#known.verified.has(answer);
  }

  /** `answer` passed verification; `line` is its bytes, for the next call to send its method ahead on. */
  remember(answer: object | undefined, line: Buffer | undefined): void {
    if (answer) this.#known.verified.add(answer);
    this.#known.line = line;
  }

  /**
   * Right before the method is written: true when the helper already sent it (then it is not
   * written again), else the helper is told the next write is the last.
   */
  methodSentAhead(child: CallProcess): boolean {
    const sentAhead = child.sentAhead === true;
    if (!sentAhead) child.closeStdinAfterAnswers?.(ANSWERS);
    return sentAhead;
  }
}
