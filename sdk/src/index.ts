// @switchyard/plugin-sdk: what a plugin author imports.
export * from './protocol.js';
export {
  serve,
  PluginError,
  type PluginHandler,
  type CallContext,
  type ServeStreams,
  type HealthReturn,
  type InspectReturn,
  type OperateReturn,
} from './serve.js';
