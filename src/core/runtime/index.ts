// The runtime room's door: other rooms and the shells import only from here.
export { localUser } from './core-services.js';
export { runProcess, runtimeFor } from './process-runtime.js';
export { createRuntime } from './runtime.js';
export type { Runtime } from './runtime.js';
