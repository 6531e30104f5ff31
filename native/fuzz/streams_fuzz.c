// Fuzz target (libFuzzer, ASan, UBSan) for native/streams.c: what the helper does with the bytes a
// plugin writes. The input is a plugin's output cut into the reads the helper would see, and each
// function is checked against a plain reference over the whole output:
//   byte 0: the expected first line's length (the line is the input's next bytes);
//   then chunks, each a length byte b and that many bytes (a read of stdout, and of dropped stderr):
//   b bytes when b < 128, else (b - 127) × 512 (up to 65,024: a tail over STDERR_TAIL in a few reads).
#include "../streams.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char all[1 << 20];
static size_t all_len;

#define CHECK(condition) \
  do {                   \
    if (!(condition)) abort(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t line_len = data[0];
  if (1 + line_len > size) return 0;
  // The expected line is whole: no newline in it (parse_then refuses one with a newline).
  char *line = malloc(line_len + 1);
  memcpy(line, data + 1, line_len);
  if (memchr(line, '\n', line_len)) {
    free(line);
    return 0;
  }
  struct then_match match = { line, line_len, 0 };
  enum then_step step = THEN_WAITING;
  size_t step_at = 0, step_chunk_start = 0;
  unsigned lines = 0;
  struct stderr_tail tail = { 0 };
  unsigned long long dropped = 0;
  all_len = 0;

  size_t at = 1 + line_len;
  while (at < size) {
    size_t b = data[at++], n = b < 128 ? b : (b - 127) * 512;
    if (n > size - at) n = size - at;
    const char *chunk = (const char *)data + at;
    if (step == THEN_WAITING) {
      size_t where = (size_t)-1;
      step = then_follow(&match, chunk, n, &where);
      if (step == THEN_MATCHED) {
        CHECK(where < n && chunk[where] == '\n');
        step_at = all_len + where;
      }
      step_chunk_start = all_len;
    }
    lines += count_newlines(chunk, n);
    tail_keep(&tail, chunk, n);
    dropped += n;
    if (all_len + n <= sizeof all) {
      memcpy(all + all_len, chunk, n);
      all_len += n;
    }
    at += n;
  }
  (void)step_chunk_start;
  if (all_len != dropped) goto done; // over the reference's buffer: the checks below need all of it

  // The reference: the first line of the whole output.
  const char *newline = memchr(all, '\n', all_len);
  if (newline && (size_t)(newline - all) == line_len && memcmp(all, line, line_len) == 0) {
    CHECK(step == THEN_MATCHED && step_at == (size_t)(newline - all));
  } else if (newline || all_len > line_len || (all_len && memcmp(all, line, all_len) != 0)) {
    CHECK(step == THEN_OTHER);
  } else {
    CHECK(step == THEN_WAITING && match.matched == all_len);
  }

  unsigned expected_lines = 0;
  for (size_t i = 0; i < all_len; i++) expected_lines += all[i] == '\n';
  CHECK(lines == expected_lines);

  // The tail is the last STDERR_TAIL bytes exactly.
  size_t tail_expected = all_len < STDERR_TAIL ? all_len : STDERR_TAIL;
  CHECK(tail.len == tail_expected);
  if (tail_expected) CHECK(memcmp(tail.buf, all + all_len - tail_expected, tail_expected) == 0);
  // What is shown: a suffix of the tail; when the tail was cut, it starts after a newline (or is empty).
  const char *start = NULL;
  size_t shown = tail_whole_lines(&tail, dropped, &start);
  CHECK(shown <= tail.len);
  if (shown) CHECK(start == tail.buf + tail.len - shown);
  if (dropped > tail.len && shown) CHECK(start[-1] == '\n');
  if (dropped <= tail.len) CHECK(shown == tail.len);
  if (dropped > tail.len && !shown && tail.len) CHECK(memchr(tail.buf, '\n', tail.len) == NULL || tail.buf[tail.len - 1] == '\n');

done:
  free(tail.buf);
  free(line);
  return 0;
}
