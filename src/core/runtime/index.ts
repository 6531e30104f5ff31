// The runtime room's door: other rooms and the shells import only from here.
export * from './core-services.js';
export * from './process-runtime.js';
export * from './runtime.js';
