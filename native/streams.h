// What the helper does with the bytes a plugin writes (streams.c), apart from
// relaying them: follows its first stdout line against the one a THEN frame
// expects, counts stdout's lines, and keeps the last bytes of the stderr it
// drops. Pure functions over the bytes, with fixed bounds (one STDERR_TAIL
// buffer per call): fuzzed by native/fuzz/streams_fuzz.c against a reference.
// Depends on nothing else of the helper.
#ifndef SY_STREAMS_H
#define SY_STREAMS_H
#include <stddef.h>

/** The most of a call's dropped stderr kept for its end. */
#define STDERR_TAIL (64u << 10)

/** A THEN frame's expected first line (`len` bytes, no newline), and how much of it matched so far. */
struct then_match {
  const char *line;
  size_t len, matched;
};

enum then_step {
  THEN_WAITING = 0, // every byte so far matches; the line is not over
  THEN_MATCHED = 1, // a newline ended an exact match: it is at data[*at]
  THEN_OTHER = 2, // the first line is another one (the host answers it itself)
};

/** Follows `n` more bytes of stdout. After THEN_MATCHED or THEN_OTHER, the match is over. */
enum then_step then_follow(struct then_match *match, const char *data, size_t n, size_t *at);

/** The newlines in `n` bytes. */
unsigned count_newlines(const char *data, size_t n);

/** The last STDERR_TAIL bytes of what was dropped; `buf` is allocated once, on first use. */
struct stderr_tail {
  char *buf;
  size_t len;
};

/** Adds dropped bytes (without memory for the buffer they are only counted, by the caller). */
void tail_keep(struct stderr_tail *tail, const char *data, size_t n);

/**
 * What of the tail to show once `dropped` bytes were dropped in all: its whole lines only when the
 * tail was cut (a fragment could hide a secret from redaction). The bytes from `*start`, their count returned.
 */
size_t tail_whole_lines(const struct stderr_tail *tail, unsigned long long dropped, const char **start);
#endif
