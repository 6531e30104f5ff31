// What the api accepts in one request body, before any route sees it.
export const BODY_LIMIT = 64 * 1024;
/** Deeper JSON bodies are refused before parsing (a deep body would overflow the stack later). */
export const MAX_JSON_DEPTH = 64;
