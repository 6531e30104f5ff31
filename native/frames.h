// The frames of sy-spawner's protocol, read and written (frames.c): the host's
// frames and their payloads (every length checked here), the helper's frame
// headers, the keeper's records and the helper's orders to a serving keeper,
// and the little-endian u32s they use. The constants are the table's
// (protocol.h, generated from protocol.json). Depends on nothing else of the helper.
#ifndef SY_FRAMES_H
#define SY_FRAMES_H
#include "protocol.h"
#include <stddef.h>
#include <stdint.h>

/** Little-endian u32s of the frames and of a serving keeper's requests. */
static inline void put_u32(char *at, uint32_t value) {
  at[0] = (char)(value & 0xff);
  at[1] = (char)((value >> 8) & 0xff);
  at[2] = (char)((value >> 16) & 0xff);
  at[3] = (char)((value >> 24) & 0xff);
}

static inline uint32_t get_u32(const char *at) {
  const unsigned char *u = (const unsigned char *)at;
  return (uint32_t)u[0] | ((uint32_t)u[1] << 8) | ((uint32_t)u[2] << 16) | ((uint32_t)u[3] << 24);
}

/** One frame of the host's, its payload where it lies in the input buffer. */
struct frame {
  uint32_t len, id;
  int type;
  char *payload;
};

enum frame_read { FRAME_WHOLE = 0, FRAME_PARTIAL = 1, FRAME_TOO_LONG = 2 };

/**
 * The frame at the start of `avail` bytes: FRAME_WHOLE (`out` set), FRAME_PARTIAL
 * (its header or payload is not all there yet), FRAME_TOO_LONG (its length is over MAX_FRAME).
 */
enum frame_read frame_next(char *at, size_t avail, struct frame *out);

/** A helper frame's header at `at` (FRAME_HEADER bytes). */
void frame_header(char *at, uint32_t len, uint32_t id, int type);

/** STDIN_LAST: u32 lines, then the bytes. 0, or -1 when the payload is too short. */
int parse_stdin_last(const struct frame *frame, uint32_t *lines, const char **data, size_t *len);

/** THEN's payload: the first line to expect (whole: not empty, no newline) and the request to send on it. */
struct then_frame {
  uint32_t lines;
  const char *line, *request;
  size_t line_len, request_len;
};

/** THEN: 0, or -1 when the payload is too short or its line is not a whole line followed by a request. */
int parse_then(const struct frame *frame, struct then_frame *out);

/**
 * A keeper's records to the helper on a call's status pipe, each of the same size: RECORD_PID the
 * leader's pid, RECORD_FAILED an errno (the call did not start), RECORD_EXIT the leader's wait status,
 * RECORD_LIMITS the LIMIT_* bits the call hit by a wait status (LIMIT_CPU, LIMIT_FILE_SIZE) or by its
 * tmpfs (LIMIT_DISK, LIMIT_FILE_SIZE; isolate.h), sent once nothing of the call runs (the helper adds
 * those its cgroups counted, limits_end); a serving keeper then RECORD_RETIRED when it retires, and
 * RECORD_END: the call is over, nothing of it runs.
 */
struct record {
  char type;
  int32_t value;
} __attribute__((packed));

enum record_type {
  RECORD_PID = 'P',
  RECORD_FAILED = 'F',
  RECORD_EXIT = 'X',
  RECORD_LIMITS = 'L',
  RECORD_RETIRED = 'R',
  RECORD_END = 'E',
};

/** Takes the first whole record off `buf` (`*len` bytes held, the rest moved up): 1 with `out` set, or 0. */
int take_record(char *buf, size_t *len, struct record *out);

/**
 * The helper's orders to a serving keeper on its line, ORDER_BYTES each: ORDER_SPAWN, u32 length,
 * then the SPAWN payload (the call's descriptors ride on it); ORDER_KILL, u32 call id.
 */
enum { ORDER_BYTES = 5 };
enum order_type { ORDER_SPAWN = 'S', ORDER_KILL = 'K' };

void put_order(char *at, char type, uint32_t value);

/** The order at `at` (ORDER_BYTES): its type, its u32 in `*value`. */
char get_order(const char *at, uint32_t *value);

/** Resource limits of one call; 0 = not limited. */
struct limits {
  unsigned long long memory, cpu_seconds, file_size, open_files, processes, disk;
};

/** A SPAWN frame, read (parse_spawn), with what the helper adds for its keeper. */
struct spawn_request {
  const char *path, *cwd;
  char **argv, **envp;
  unsigned flags;
  /** NULL-terminated: the Landlock paths (read-only and read-write) when SPAWN_FILES. */
  const char **read_paths, **write_paths;
  struct limits limits;
  /** SPAWN_ISOLATE: where the call's tmpfs goes (its TMPDIR; its parent is made read-only), or NULL. */
  const char *tmp;
  /** The helper's slot for this call (its index in the call table): a pool of reusable cgroups (limits.h). */
  unsigned slot;
  /** Set by the helper (confine.h cached_ruleset): the call's Landlock ruleset, or -1 and why not. */
  int ruleset, ruleset_error;
};

/**
 * A SPAWN payload (u32 argc, u32 envc, u32 flags, u32 policyc, then NUL-terminated
 * path, cwd, argv..., env..., policy entries) into `req`, its strings pointing into
 * `payload`; `*list` (argv, env and the policy's paths) to free. 0, or -1 with errno
 * (EINVAL: malformed, ENOMEM). Policy entries: read=<path>, write=<path> (SPAWN_FILES);
 * memory=, cpu=, fsize=, nofile=, nproc=, disk=<n> (SPAWN_LIMITS, SPAWN_ISOLATE); tmp=<path>.
 */
int parse_spawn(char *payload, size_t len, struct spawn_request *req, char ***list);
#endif
