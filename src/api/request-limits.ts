// What the api accepts in one request body, before any route sees it.
export const BODY_LIMIT = 64 * 1024;
/** Deeper JSON bodies are refused before parsing (a deep body would overflow the stack later). */
export const MAX_JSON_DEPTH = 64;

/**
 * True when a JSON text nests objects and arrays deeper than `max`. Scanned
 * without parsing or recursion, so a body 100,000 levels deep costs one pass.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index++; // backslash: skip the escaped character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      if (++depth > max) return true;
    } else if (char === 0x7d || char === 0x5d) depth--;
  }
  return false;
}
