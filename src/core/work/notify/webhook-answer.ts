// What a receiver answered, as a delivery attempt keeps it: at most
// ANSWER_BYTES of the body (the rest is never read: a hostile receiver may
// send megabytes or never end), a few headers, every control character
// written as a visible escape (no escape code reaches a terminal or a page)
// and secrets redacted, as every stored text is (the webhook's own secrets
// too: a receiver that echoes what it got must not store them).
import { escapeControl, escapeControlKeepingLines, redact, REDACTED } from '../../safety/index.js';
import type { ReceiverAnswer } from './webhook-store.js';

/** How much of the body is read and kept. */
export const ANSWER_BYTES = 2_048;
const MAX_HEADERS = 16;
const MAX_HEADER_CHARS = 200;
/** Never kept: they carry the receiver's credentials, not its answer. */
const DROPPED_HEADERS = new Set(['set-cookie', 'authorization', 'proxy-authenticate', 'www-authenticate']);

/** Reads the start of `response`'s body and cancels the rest; a failed read keeps what came. */
export async function readAnswer(response: Response, secrets: readonly string[]): Promise<ReceiverAnswer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = response.body?.getReader();
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > ANSWER_BYTES) {
        truncated = true;
        break;
      }
    }
  } catch {
    // A body cut off or too slow (the attempt's timeout): the status is the answer.
    truncated = true;
  } finally {
    await reader?.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(chunks).subarray(0, ANSWER_BYTES);
  // A multi-byte character cut at the end decodes as U+FFFD: harmless.
  const safe = (text: string, escape: (text: string) => string) =>
    escape(redact(secrets.reduce((kept, secret) => kept.replaceAll(secret, REDACTED), text)));
  const body = safe(bytes.toString('utf8'), escapeControlKeepingLines);
  return { headers: answerHeaders(response.headers, safe), body, truncated };
}

function answerHeaders(
  headers: Headers,
  safe: (text: string, escape: (text: string) => string) => string,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (DROPPED_HEADERS.has(name)) continue;
    if (Object.keys(kept).length >= MAX_HEADERS) break;
    kept[escapeControl(name).slice(0, 64)] = safe(value, escapeControl).slice(0, MAX_HEADER_CHARS);
  }
  return kept;
}
