// What the helper does with the bytes a plugin writes (streams.h). Every index
// is checked against the lengths given; nothing here allocates beyond one
// STDERR_TAIL buffer per call.
#include "streams.h"
#include <stdlib.h>
#include <string.h>

enum then_step then_follow(struct then_match *match, const char *data, size_t n, size_t *at) {
  for (size_t i = 0; i < n; i++) {
    char byte = data[i];
    if (byte == '\n' && match->matched == match->len) {
      *at = i;
      return THEN_MATCHED;
    }
    if (byte == '\n' || match->matched == match->len || byte != match->line[match->matched]) return THEN_OTHER;
    match->matched++;
  }
  return THEN_WAITING;
}

unsigned count_newlines(const char *data, size_t n) {
  unsigned lines = 0;
  for (const char *at = data, *end = data + n; (at = memchr(at, '\n', (size_t)(end - at))); at++) lines++;
  return lines;
}

void tail_keep(struct stderr_tail *tail, const char *data, size_t n) {
  if (!tail->buf && !(tail->buf = malloc(STDERR_TAIL))) return;
  if (n >= STDERR_TAIL) {
    memcpy(tail->buf, data + n - STDERR_TAIL, STDERR_TAIL);
    tail->len = STDERR_TAIL;
    return;
  }
  size_t keep = tail->len + n > STDERR_TAIL ? STDERR_TAIL - n : tail->len;
  memmove(tail->buf, tail->buf + tail->len - keep, keep);
  memcpy(tail->buf + keep, data, n);
  tail->len = keep + n;
}

size_t tail_whole_lines(const struct stderr_tail *tail, unsigned long long dropped, const char **start) {
  size_t skip = 0;
  *start = tail->buf;
  if (!tail->len) return 0; // also no buffer: NULL + 0 is undefined in C (found by the fuzzer)
  // A tail that was cut starts inside a line.
  if (dropped > tail->len) {
    const char *newline = memchr(tail->buf, '\n', tail->len);
    skip = newline ? (size_t)(newline - tail->buf) + 1 : tail->len;
  }
  *start = tail->buf + skip;
  return tail->len - skip;
}
