// The safety room's door: other rooms and the shells import only from here.
export * from './control-sequences.js';
export * from './redact.js';
export * from './secret-patterns.js';
export * from './terminal-safe.js';
export * from './token-format.js';
