// The plugins room's door: other rooms and the shells import only from here.
export * from './call-metrics.js';
export * from './confinement-report.js';
export * from './confinement-settings.js';
export * from './discovery.js';
export * from './fingerprint.js';
export * from './intact-package.js';
export * from './log-follow.js';
export * from './plugin-calls.js';
export * from './plugin-caps.js';
export * from './plugin-rules.js';
export * from './plugin-service.js';
export * from './plugin-store.js';
export * from './time-limits.js';
export * from './result-redaction.js';
export * from './retention-policy.js';
export * from './worker-slots.js';
