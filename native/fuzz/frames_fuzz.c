// Fuzz target (libFuzzer, ASan, UBSan) for native/frames.c: the helper's input buffer, cut into frames
// as the helper's loop does, every payload given to the parser of its type, and the keeper's records
// taken off a status buffer. No input may read or write outside what it was given.
#include "../frames.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(condition) \
  do {                   \
    if (!(condition)) abort(); \
  } while (0)

static void parse_payload(struct frame *frame) {
  // The parsers may write into the payload (parse_spawn reads NUL-terminated strings in place): a copy of
  // exactly its bytes, so ASan sees any read past them.
  char *payload = malloc(frame->len ? frame->len : 1);
  memcpy(payload, frame->payload, frame->len);
  struct frame copy = *frame;
  copy.payload = payload;
  uint32_t lines;
  const char *data;
  size_t len;
  if (parse_stdin_last(&copy, &lines, &data, &len) == 0)
    CHECK(data >= payload && data + len == payload + frame->len);
  struct then_frame then;
  if (parse_then(&copy, &then) == 0) {
    CHECK(then.line_len > 0 && !memchr(then.line, '\n', then.line_len));
    CHECK(then.request + then.request_len == payload + frame->len && then.request_len > 0);
  }
  struct spawn_request request;
  char **list = NULL;
  if (parse_spawn(payload, frame->len, &request, &list) == 0) {
    // Every string it gives lies in the payload and ends there.
    CHECK(request.path >= payload && request.path < payload + frame->len);
    for (char **arg = request.argv; *arg; arg++) CHECK(*arg >= payload && *arg < payload + frame->len);
    for (char **env = request.envp; *env; env++) CHECK(*env >= payload && *env < payload + frame->len);
    for (const char **path = request.read_paths; *path; path++) CHECK(strlen(*path) < frame->len);
    for (const char **path = request.write_paths; *path; path++) CHECK(strlen(*path) < frame->len);
    free(list);
  }
  free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buffer = malloc(size ? size : 1);
  memcpy(buffer, data, size);
  size_t at = 0;
  for (;;) {
    struct frame frame;
    enum frame_read read = frame_next(buffer + at, size - at, &frame);
    if (read != FRAME_WHOLE) {
      CHECK(read == FRAME_PARTIAL || read == FRAME_TOO_LONG);
      break;
    }
    CHECK(frame.len <= MAX_FRAME && frame.payload + frame.len <= buffer + size);
    parse_payload(&frame);
    at += FRAME_HEADER + frame.len;
  }
  // The same bytes as a keeper's status pipe: whole records only, the rest kept in order.
  char status[sizeof(struct record) * 4];
  size_t held = size < sizeof status ? size : sizeof status;
  memcpy(status, data, held);
  struct record record;
  size_t taken = 0;
  while (take_record(status, &held, &record)) taken++;
  CHECK(held < sizeof record && taken == (size < sizeof status ? size : sizeof status) / sizeof record);
  if (size >= ORDER_BYTES) {
    uint32_t value;
    char type = get_order(buffer, &value);
    char again[ORDER_BYTES];
    put_order(again, type, value);
    CHECK(memcmp(again, buffer, ORDER_BYTES) == 0);
  }
  free(buffer);
  return 0;
}
