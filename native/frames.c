// The frames of sy-spawner's protocol (frames.h): the host's frames are cut
// and their payloads read here, every length checked before a byte is used;
// the keeper's records and the helper's orders to a serving keeper too.
#include "frames.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum frame_read frame_next(char *at, size_t avail, struct frame *out) {
  if (avail < FRAME_HEADER) return FRAME_PARTIAL;
  uint32_t len = get_u32(at);
  if (len > MAX_FRAME) return FRAME_TOO_LONG;
  if (avail - FRAME_HEADER < (size_t)len) return FRAME_PARTIAL;
  *out = (struct frame){ len, get_u32(at + 4), (unsigned char)at[8], at + FRAME_HEADER };
  return FRAME_WHOLE;
}

void frame_header(char *at, uint32_t len, uint32_t id, int type) {
  put_u32(at, len);
  put_u32(at + 4, id);
  at[8] = (char)type;
}

int parse_stdin_last(const struct frame *frame, uint32_t *lines, const char **data, size_t *len) {
  if (frame->len < 4) return -1;
  *lines = get_u32(frame->payload);
  *data = frame->payload + 4;
  *len = frame->len - 4;
  return 0;
}

int parse_then(const struct frame *frame, struct then_frame *out) {
  if (frame->len < 8) return -1;
  uint32_t lines = get_u32(frame->payload), expected = get_u32(frame->payload + 4);
  size_t rest = frame->len - 8;
  // A line to expect is whole (no newline in it, not empty), and there is a request to send.
  if (expected == 0 || expected >= rest || memchr(frame->payload + 8, '\n', expected)) return -1;
  *out = (struct then_frame){ lines, frame->payload + 8, frame->payload + 8 + expected, expected, rest - expected };
  return 0;
}

int take_record(char *buf, size_t *len, struct record *out) {
  if (*len < sizeof *out) return 0;
  memcpy(out, buf, sizeof *out);
  memmove(buf, buf + sizeof *out, *len - sizeof *out);
  *len -= sizeof *out;
  return 1;
}

void put_order(char *at, char type, uint32_t value) {
  at[0] = type;
  put_u32(at + 1, value);
}

char get_order(const char *at, uint32_t *value) {
  *value = get_u32(at + 1);
  return at[0];
}

enum { POLICY_LIMIT = 0, POLICY_READ_PATH = 1, POLICY_WRITE_PATH = 2 };

/** `entry` starts with `key` (a POLICY_* of protocol.h, "name="); the value after it, or NULL. */
static const char *policy_value(const char *entry, const char *key) {
  size_t n = strlen(key);
  return strncmp(entry, key, n) == 0 ? entry + n : NULL;
}

/** One policy entry (`name=value`): a limit into the request, or which list a path goes to; -1 when unknown. */
static int add_policy(struct spawn_request *req, const char *entry) {
  static const char *const numbers[] = { POLICY_MEMORY, POLICY_CPU,   POLICY_FSIZE,
                                         POLICY_NOFILE, POLICY_NPROC, POLICY_DISK };
  unsigned long long *fields[] = { &req->limits.memory, &req->limits.cpu_seconds, &req->limits.file_size,
                                   &req->limits.open_files, &req->limits.processes, &req->limits.disk };
  if (policy_value(entry, POLICY_READ)) return POLICY_READ_PATH;
  if (policy_value(entry, POLICY_WRITE)) return POLICY_WRITE_PATH;
  const char *tmp = policy_value(entry, POLICY_TMP);
  if (tmp) {
    req->tmp = tmp;
    return POLICY_LIMIT;
  }
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
    const char *value = policy_value(entry, numbers[i]);
    if (!value) continue;
    char *end;
    errno = 0;
    *fields[i] = strtoull(value, &end, 10);
    return errno || *end || end == value ? -1 : POLICY_LIMIT;
  }
  return -1;
}

int parse_spawn(char *payload, size_t len, struct spawn_request *out, char ***out_list) {
  if (len < 16) return errno = EINVAL, -1;
  uint32_t argc = get_u32(payload), envc = get_u32(payload + 4), flags = get_u32(payload + 8),
           policyc = get_u32(payload + 12);
  size_t strings = 2 + (size_t)argc + envc + policyc;
  if (argc == 0 || strings > len) return errno = EINVAL, -1;
  // argv, NULL, env, NULL, then the read paths, NULL, and the write paths, NULL.
  char **list = calloc(strings + 2 + 2 * (size_t)policyc + 2, sizeof *list);
  if (!list) return errno = ENOMEM, -1;
  char *at = payload + 16, *end = payload + len;
  size_t fixed = 2 + (size_t)argc + envc;
  struct spawn_request req = { 0 };
  const char **reads = (const char **)list + fixed + 2, **writes = reads + policyc + 1;
  req.read_paths = reads;
  req.write_paths = writes;
  for (size_t i = 0; i < strings; i++) {
    char *nul = memchr(at, 0, (size_t)(end - at));
    if (!nul) {
      free(list);
      return errno = EINVAL, -1;
    }
    if (i < fixed) {
      list[i + (i >= 2 + argc ? 1 : 0)] = at; // a NULL after argv, one after env (calloc)
    } else {
      int kind = add_policy(&req, at);
      if (kind < 0) {
        free(list);
        return errno = EINVAL, -1;
      }
      if (kind == POLICY_READ_PATH) *reads++ = strchr(at, '=') + 1;
      if (kind == POLICY_WRITE_PATH) *writes++ = strchr(at, '=') + 1;
    }
    at = nul + 1;
  }
  req.path = list[0];
  req.cwd = list[1];
  req.argv = list + 2;
  req.envp = list + 3 + argc;
  req.flags = flags;
  *out = req;
  *out_list = list;
  return 0;
}
