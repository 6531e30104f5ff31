// The safety room's door: other rooms and the shells import only from here.
export {
  boundedMessage,
  mayHoldSecret,
  redact,
  redactDeep,
  REDACTED,
  registerSecret,
  webhookUrlForViewer,
} from './redact.js';
export { SECRET_ENV_NAME } from './secret-patterns.js';
export { escapeControl, escapeControlDeep, escapeControlKeepingLines } from './terminal-safe.js';
export { formatToken, TOKEN_PATTERN } from './token-format.js';
