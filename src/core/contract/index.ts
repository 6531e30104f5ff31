// The contract room's door: the HTTP API's routes and their schemas, and the
// Server-Sent Events reader, for the api, the CLI's remote backend and the web UI.
export * from './http-routes.js';
export * from './request-schemas.js';
export * from './response-schemas.js';
export * from './server-events.js';
