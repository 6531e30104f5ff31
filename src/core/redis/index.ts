// The redis room's door: other rooms and the shells import only from here.
export * from './call-state.js';
export * from './channel-messages.js';
export * from './connections.js';
export * from './event-hub.js';
export * from './keys.js';
export * from './pages.js';
export * from './queues.js';
export * from './redis-server.js';
export * from './replica-ack.js';
export * from './scripts.js';
export * from './watched-key.js';
export * from './id-refs.js';
