// The contract room's door: the HTTP API's routes and their schemas, and the
// Server-Sent Events reader, for the api, the CLI's remote backend and the web UI.
export { routes } from './http-routes.js';
export type {
  Answer,
  AnswerOf,
  BodyIn,
  BodyOut,
  EventOf,
  HttpRoute,
  PathParams,
  QueryIn,
  QueryOut,
} from './http-routes.js';
export { problem } from './response-schemas.js';
export type { Problem } from './response-schemas.js';
export { MAX_EVENT_CHARS, serverEvents, textChunks } from './server-events.js';
export type { ServerEvent } from './server-events.js';
