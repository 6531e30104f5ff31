// @switchyard/plugin-sdk: what a plugin author imports.
export * from './protocol.js';
export { PluginError } from './errors.js';
export {
  serve,
  type PluginHandler,
  type CallContext,
  type ServeStreams,
  type HealthReturn,
  type InspectReturn,
  type OperateReturn,
} from './serve.js';
