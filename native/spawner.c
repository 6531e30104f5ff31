// sy-spawner: one long-lived helper per Switchyard worker process that starts
// plugin calls and guarantees that no descendant of a call outlives the call,
// nor the worker (docs/PROTOCOL.md §9.3, §9.5). Started once by
// src/core/supervision/spawner.ts; speaks framed messages on stdin/stdout (read
// and written by frames.c; their constants are the table's, native/protocol.json):
//
//   frame  = u32 LE payload length, u32 LE call id, u8 type, payload
//   (`sy-spawner --probe` prints "landlock-abi <n>" and exits instead)
//   host → helper: SPAWN (u32 argc, u32 envc, u32 flags, u32 policyc,
//                  NUL-terminated path, cwd, argv..., env..., policy...),
//                  STDIN (bytes), STDIN_CLOSE, KILL, STDIN_LAST (u32 lines, bytes:
//                  the call's last stdin; the helper closes the plugin's stdin
//                  once its stdout has given that many lines in all), THEN (u32
//                  lines, u32 n, n bytes of an expected first line, bytes: sent
//                  as STDIN_LAST would be the moment the plugin's first stdout
//                  line is exactly the n bytes, with SENT just before that line;
//                  otherwise never; n > 0, no newline in them, a request to
//                  send; KILL and STDIN_CLOSE disarm it)
//   policy entries: read=<path>, write=<path> (Landlock, SPAWN_FILES);
//                  memory=, cpu=, fsize=, nofile=, nproc=<n> (SPAWN_LIMITS);
//                  disk=<n>, tmp=<path> (SPAWN_ISOLATE: the call's tmpfs, isolate.h)
//   helper → host: HELLO (call id 0: u32 Landlock ABI, u32 seccomp, u32
//                  LIMIT_* bits enforceable; LIMIT_DISK: it can isolate calls), SPAWNED (u32 pid, u32 keeper
//                  pid, u32 1 when that keeper serves call after call), FAILED (u32 errno + text), STDOUT, STDERR (bytes),
//                  STDOUT_EOF, STDERR_EOF, EXIT (i32 code, i32 signal), LIMIT
//                  (u32 LIMIT_* bits the call hit), DONE (nothing of the
//                  call runs any more), SENT (THEN's bytes went to the plugin)
//
// Per slot (one call at a time) the helper forks (no exec) a keeper, a child
// subreaper with a parent-death signal, which serves the slot's calls one
// after another (keeper_serve; a call the host had to kill retires it, and a
// request too large for its line gets a keeper of its own, keeper_main). For
// each call it starts the plugin in its own session, under
// Landlock signal scoping where the kernel has it (the plugin can then signal
// nothing outside its call: not its keeper, this helper or the worker).
// Every orphaned descendant of the plugin (setsid, double fork, outliving its
// parent) is re-parented to the keeper. When the plugin leader exits, or the
// helper dies, the keeper SIGKILLs the leader's group and each of its own
// children until it has none, then exits. Containment does not rely on the
// keeper: the helper is a subreaper too, so if a keeper dies (or is killed on
// KILL, stopped or not) its processes are re-parented here, and the helper
// SIGKILLs every child of its own that is not a live keeper; a call is DONE
// only once its keeper is reaped and no such orphan is left. The helper dies
// with the worker: EOF on stdin, or its own parent-death signal, killing
// every call's processes first.
#define _GNU_SOURCE
#include "keeper.h"
#include "confine.h"
#include "frames.h"
#include "isolate.h"
#include "limits.h"
#include "streams.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/** One line on stderr (what went wrong, the errno text when there is one, the code), then exit. */
static void die(enum helper_exit code, const char *what, int error) __attribute__((noreturn));
static void die(enum helper_exit code, const char *what, int error) {
  char line[256];
  int n = snprintf(line, sizeof line, "sy-spawner: %s%s%s (exit %d %s)\n", what, error ? ": " : "",
                   error ? strerror(error) : "", (int)code, helper_exit_name(code));
  if (n > 0) {
    ssize_t written = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)written;
  }
  _exit(code);
}

#define CHUNK 65536
// A call's stderr is relayed up to STDERR_WINDOW_BYTES per STDERR_WINDOW_NS (1.25 MiB/s: live logs stay live);
// beyond that the helper reads it and drops it, saying how much, and keeps the last STDERR_TAIL bytes for the
// end. A flood then costs a read and a copy here, not a trip through the worker's streams.
#define STDERR_WINDOW_NS 100000000LL
#define STDERR_WINDOW_BYTES (128u << 10)
// Frames for the host wait up to HOLD_NS to leave together (a call's pid with its first answer, its last
// answer with its exit and end: one write and one wake-up of the worker instead of several), unless the host
// has to act on one: an answer it must reply to, a call's end, a failed start. Live stderr stays live.
#define HOLD_NS 10000000LL
#define HOLD_MAX_BYTES (64u << 10)

// ---- helper -----------------------------------------------------------------------

struct call {
  uint32_t id;
  int active;
  pid_t keeper, leader;
  int in_w, out_r, err_r, status_r;
  char *pending;
  size_t pending_len;
  int close_stdin;
  unsigned close_after_lines; // STDIN_LAST: close stdin once stdout has given this many lines (0: host closes it)
  unsigned out_lines; // newlines relayed on stdout so far
  size_t out_bytes; // bytes relayed on stdout so far
  // THEN: bytes sent once the first stdout line is exactly `then_line` (then_len bytes), with then_lines.
  char *then_line, *then_request;
  size_t then_len, then_request_len, then_matched;
  unsigned then_lines;
  int keeper_reaped; // its keeper is reaped, or (a serving keeper) closed the call's status pipe
  int served; // by the slot's serving keeper (struct server), not a keeper forked for it
  int kills; // KILL frames (or shutdown) so far: the first asks the keeper, the next kill it
  int limits; // SPAWN_LIMITS: the slot's cgroup counters are read at the end (limits_end)
  unsigned limits_hit; // LIMIT_* bits the keeper reported (RECORD_LIMITS), sent with the cgroups' at the end
  char status_buf[sizeof(struct record) * 4];
  size_t status_len;
  // stderr beyond the relay budget (deliver): counted, its last STDERR_TAIL bytes kept for the end.
  long long err_window_ns;
  size_t err_window_bytes;
  unsigned long long err_dropped;
  struct stderr_tail err_tail;
};

static struct call *calls;
static size_t call_count;
static int orphans; // children of the helper that are not live keepers, at the last look
static int orphans_possible; // a keeper died other than by its clean exit (it leaves no child then)
static char *out_buf;
static size_t out_len, out_cap;
static long long out_since_ns; // when the oldest frame not yet written was emitted
static int out_urgent; // a frame the host must act on is waiting: write now
static int devnull;
static pid_t self_pid;

static void out_reserve(size_t extra) {
  if (out_len + extra <= out_cap) return;
  while (out_len + extra > out_cap) out_cap = out_cap ? out_cap * 2 : 1 << 16;
  out_buf = realloc(out_buf, out_cap);
  if (!out_buf) die(EXIT_OUT_OF_MEMORY, "out of memory for the output buffer", 0);
}

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void emit(uint32_t id, int type, const void *data, size_t len) {
  if (out_len == 0) out_since_ns = monotonic_ns();
  if (type == S_DONE || type == S_FAILED || type == S_HELLO) out_urgent = 1;
  out_reserve(FRAME_HEADER + len);
  frame_header(out_buf + out_len, (uint32_t)len, id, type);
  if (len) memcpy(out_buf + out_len + FRAME_HEADER, data, len);
  out_len += FRAME_HEADER + len;
}

static void emit_u32s(uint32_t id, int type, uint32_t a, uint32_t b, int count) {
  char payload[8];
  put_u32(payload, a);
  put_u32(payload + 4, b);
  emit(id, type, payload, (size_t)count * 4);
}

static void shutdown_all(void) __attribute__((noreturn));
static int shutting_down;

static void flush_out(void) {
  size_t done = 0;
  while (done < out_len) {
    ssize_t n = write(1, out_buf + done, out_len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd p = { 1, POLLOUT, 0 };
        poll(&p, 1, -1);
        continue;
      }
      // Its end of the pipe closed: the worker is gone. End every call and remove the cgroup pool
      // (once: what shutting down still says is dropped).
      out_len = 0;
      if (shutting_down) return;
      shutdown_all();
    }
    done += (size_t)n;
  }
  out_len = 0;
  out_urgent = 0;
}

/** Writes what is held when the host must act on it, or it is big or old enough; else how long it may wait (ms). */
static int flush_due(void) {
  if (out_len == 0) return -1;
  long long waited = monotonic_ns() - out_since_ns;
  if (out_urgent || out_len >= HOLD_MAX_BYTES || waited >= HOLD_NS) {
    flush_out();
    return -1;
  }
  return (int)((HOLD_NS - waited + 999999) / 1000000);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static struct call *find_call(uint32_t id) {
  for (size_t i = 0; i < call_count; i++)
    if (calls[i].active && calls[i].id == id) return &calls[i];
  return NULL;
}

static struct call *new_call(uint32_t id) {
  for (size_t i = 0; i < call_count; i++)
    if (!calls[i].active) {
      memset(&calls[i], 0, sizeof calls[i]);
      calls[i].id = id;
      calls[i].active = 1;
      return &calls[i];
    }
  calls = realloc(calls, (call_count + 1) * sizeof *calls);
  if (!calls) die(EXIT_OUT_OF_MEMORY, "out of memory for the call table", 0);
  memset(&calls[call_count], 0, sizeof *calls);
  calls[call_count].id = id;
  calls[call_count].active = 1;
  return &calls[call_count++];
}

static void fail_spawn(uint32_t id, int error) {
  const char *text = strerror(error);
  size_t len = strlen(text);
  char payload[4 + 256];
  if (len > 256) len = 256;
  put_u32(payload, (uint32_t)error);
  memcpy(payload + 4, text, len);
  emit(id, S_FAILED, payload, 4 + len);
}

static void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/**
 * Serving keepers, one per slot (the slot's index in the call table), each
 * started on its slot's first call and reused call after call: no keeper is
 * forked per call, and one in its slot's cgroups starts plugins there (no
 * cgroup migration per call). A keeper that ended a call by a signal retires.
 */
struct server {
  pid_t pid;
  int ctl; // the helper's end of the keeper's line (non-blocking)
  int limits; // in the slot's cgroups
};
static struct server *servers;
static size_t server_count;

static struct server *server_of(pid_t pid) {
  for (size_t i = 0; i < server_count; i++)
    if (servers[i].pid > 0 && servers[i].pid == pid) return &servers[i];
  return NULL;
}

/** A request bigger than this goes to a keeper forked for it (the line's buffer takes it whole). */
#define SERVE_MAX (60u << 10)

static void retire_server(struct server *server) {
  limits_forget_baseline((unsigned)(server - servers));
  if (server->pid > 0) kill(server->pid, SIGKILL);
  if (server->ctl >= 0) close(server->ctl);
  server->pid = 0;
  server->ctl = -1;
  orphans_possible = 1;
}

/** The slot's serving keeper for a call with (or without) limits, started if need be; 0 when none can be. */
static pid_t server_for(unsigned slot, int limits) {
  if (slot >= server_count) {
    struct server *grown = realloc(servers, (slot + 1) * sizeof *servers);
    if (!grown) return 0;
    servers = grown;
    for (size_t i = server_count; i <= slot; i++) servers[i] = (struct server){ 0, -1, 0 };
    server_count = slot + 1;
  }
  struct server *server = &servers[slot];
  if (server->pid > 0 && server->limits != limits) retire_server(server);
  if (server->pid > 0) return server->pid;
  int line[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, line) != 0) return 0;
  pid_t pid = fork();
  if (pid == 0) keeper_serve(line[1], self_pid, devnull, slot, limits);
  close(line[1]);
  if (pid < 0) {
    close(line[0]);
    return 0;
  }
  set_nonblocking(line[0]);
  *server = (struct server){ pid, line[0], limits };
  return pid;
}

/** Hands one call to a serving keeper: the whole request in one write, or nothing (then 0). */
static int serve(struct server *server, const char *payload, size_t len, const int *fds, int fd_count) {
  char *message = malloc(ORDER_BYTES + len);
  if (!message) return 0;
  put_order(message, ORDER_SPAWN, (uint32_t)len);
  memcpy(message + ORDER_BYTES, payload, len);
  struct iovec iov = { message, ORDER_BYTES + len };
  char control[CMSG_SPACE(5 * sizeof(int))];
  memset(control, 0, sizeof control);
  struct msghdr msg = { 0 };
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE((size_t)fd_count * sizeof(int));
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN((size_t)fd_count * sizeof(int));
  memcpy(CMSG_DATA(c), fds, (size_t)fd_count * sizeof(int));
  ssize_t n;
  do n = sendmsg(server->ctl, &msg, MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  free(message);
  if (n == (ssize_t)(ORDER_BYTES + len)) return 1;
  // Not taken whole (a stopped or dead keeper, a full line): that keeper is done with.
  retire_server(server);
  return 0;
}

static void spawn_call(uint32_t id, char *payload, size_t len) {
  struct spawn_request req;
  char **list;
  if (parse_spawn(payload, len, &req, &list) != 0) return fail_spawn(id, errno);
  unsigned flags = req.flags;
  struct call *call = new_call(id);
  req.slot = (unsigned)(call - calls);
  req.ruleset = (flags & SPAWN_CONFINE) ? cached_ruleset(&req, &req.ruleset_error) : -1;
  int limits = (flags & SPAWN_LIMITS) != 0;
  // A ruleset the kernel refused is a forked keeper's to report (it has the error).
  int servable = len <= SERVE_MAX && !((flags & SPAWN_CONFINE) && req.ruleset < 0 && req.ruleset_error != ENOSYS);
  // A serving keeper lives in the slot's pids cgroup: one process more than the call's own.
  struct limits slot_limits = req.limits;
  if (servable && slot_limits.processes) slot_limits.processes += 1;
  if (limits && limits_prepare(req.slot, &slot_limits) != 0) {
    int error = errno;
    call->active = 0;
    free(list);
    return fail_spawn(id, error);
  }
  int in[2], out[2], err[2], status[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) {
    int error = errno;
    call->active = 0;
    free(list);
    return fail_spawn(id, error); // descriptors of a failed pipe2 leak only until the helper exits
  }
  pid_t keeper = 0;
  int served = 0;
  if (servable) {
    pid_t server = server_for(req.slot, limits);
    int fds[5] = { in[0], out[1], err[1], status[1], req.ruleset };
    if (server > 0 && serve(&servers[req.slot], payload, len, fds, req.ruleset >= 0 ? 5 : 4)) {
      keeper = server;
      served = 1;
    }
  }
  if (!served) {
    keeper = fork();
    if (keeper == 0) keeper_main(&req, self_pid, devnull, in[0], out[1], err[1], status[1]);
  }
  int fork_error = errno;
  free(list);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(status[1]);
  if (keeper < 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    close(status[0]);
    call->active = 0;
    return fail_spawn(id, fork_error);
  }
  call->keeper = keeper;
  call->served = served;
  call->limits = limits;
  call->in_w = in[1];
  call->out_r = out[0];
  call->err_r = err[0];
  call->status_r = status[0];
  set_nonblocking(call->in_w);
  set_nonblocking(call->out_r);
  set_nonblocking(call->err_r);
  set_nonblocking(call->status_r);
}

static void write_stdin(struct call *call) {
  while (call->pending_len > 0 && call->in_w >= 0) {
    ssize_t n = write(call->in_w, call->pending, call->pending_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      call->pending_len = 0; // EPIPE: the plugin closed its stdin; what it did not read is dropped
      break;
    }
    memmove(call->pending, call->pending + n, call->pending_len - (size_t)n);
    call->pending_len -= (size_t)n;
  }
  if (call->pending_len == 0 && call->close_stdin) close_fd(&call->in_w);
}

static void queue_stdin(struct call *call, const char *data, size_t len) {
  // Nothing to add (realloc to 0 bytes would free the buffer and look like a failure).
  if (len == 0 || call->in_w < 0 || call->close_stdin) return;
  char *grown = realloc(call->pending, call->pending_len + len);
  if (!grown) die(EXIT_OUT_OF_MEMORY, "out of memory for a call's stdin", 0);
  call->pending = grown;
  memcpy(call->pending + call->pending_len, data, len);
  call->pending_len += len;
  write_stdin(call);
}

/** Says how much stderr was dropped; at the stream's end its last whole lines follow (the tail a reader keeps). */
static void report_dropped(struct call *call, int at_end) {
  if (!call->err_dropped) return;
  const char *start = NULL;
  size_t kept = at_end ? tail_whole_lines(&call->err_tail, call->err_dropped, &start) : 0;
  if (call->err_dropped > kept) {
    char note[160];
    int len = snprintf(note, sizeof note,
                       "\n[switchyard: %llu bytes of stderr dropped: the plugin wrote more than 1.25 MiB/s]\n",
                       call->err_dropped - kept);
    emit(call->id, S_STDERR, note, (size_t)len);
  }
  if (kept) emit(call->id, S_STDERR, start, kept);
  call->err_dropped = 0;
  call->err_tail.len = 0;
}

static void disarm_then(struct call *call) {
  free(call->then_line);
  free(call->then_request);
  call->then_line = call->then_request = NULL;
}

/**
 * THEN: follows the plugin's first stdout line byte by byte against the
 * expected one. On the newline that ends an exact match, the request goes to
 * the plugin and SENT to the host, before the frame that carries that newline:
 * the host knows it was sent before its client can see the line.
 */
static void follow_then(struct call *call, const char *data, size_t n) {
  struct then_match match = { call->then_line, call->then_len, call->then_matched };
  size_t at;
  enum then_step step = then_follow(&match, data, n, &at);
  call->then_matched = match.matched;
  if (step == THEN_MATCHED) {
    emit(call->id, S_SENT, NULL, 0);
    call->close_after_lines = call->then_lines;
    queue_stdin(call, call->then_request, call->then_request_len);
  }
  if (step != THEN_WAITING) disarm_then(call); // THEN_OTHER: another first line, the host answers it itself
}

static void deliver(struct call *call, int data_type, const char *data, size_t n) {
  if (data_type != S_STDERR) {
    if (call->then_line) follow_then(call, data, n);
    call->out_bytes += n;
    emit(call->id, data_type, data, n);
    unsigned lines = count_newlines(data, n);
    if (!lines) return;
    call->out_lines += lines;
    // Before the last request an answer is what the host replies to; after it, the call's end is.
    if (!call->close_after_lines) out_urgent = 1;
    else if (call->out_lines >= call->close_after_lines && !call->close_stdin) {
      call->close_stdin = 1; // the host would close it on reading this answer: no round trip for it
      write_stdin(call);
    }
    return;
  }
  long long now = monotonic_ns();
  if (now - call->err_window_ns >= STDERR_WINDOW_NS) {
    call->err_window_ns = now;
    call->err_window_bytes = 0;
  }
  if (call->err_window_bytes + n <= STDERR_WINDOW_BYTES) {
    report_dropped(call, 0);
    call->err_window_bytes += n;
    emit(call->id, S_STDERR, data, n);
    return;
  }
  call->err_window_bytes = STDERR_WINDOW_BYTES; // this window is spent
  call->err_dropped += n;
  tail_keep(&call->err_tail, data, n);
}

static void end_stream(struct call *call, int *fd, int data_type, int eof_type) {
  close_fd(fd);
  if (data_type == S_STDERR) report_dropped(call, 1);
  emit(call->id, eof_type, NULL, 0);
}

/** Relays what the stream holds now (up to 1 MiB per turn); EOF closes it. */
static void relay(struct call *call, int *fd, int data_type, int eof_type) {
  static char chunk[CHUNK];
  for (int rounds = 0; *fd >= 0 && rounds < 16; rounds++) {
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n > 0) {
      deliver(call, data_type, chunk, (size_t)n);
      if (n < (ssize_t)sizeof chunk) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    end_stream(call, fd, data_type, eof_type);
  }
}

/** Everything left in a stream, then its end (a writer outside the call cannot hold it open). */
static void drain(struct call *call, int *fd, int data_type, int eof_type) {
  static char chunk[CHUNK];
  while (*fd >= 0) {
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n > 0) {
      deliver(call, data_type, chunk, (size_t)n);
      if (out_len > (1u << 20)) flush_out();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    end_stream(call, fd, data_type, eof_type);
  }
}

static void read_status(struct call *call) {
  for (;;) {
    ssize_t n = read(call->status_r, call->status_buf + call->status_len, sizeof call->status_buf - call->status_len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      // A serving keeper said RECORD_END first; one that died without it is over once reaped (reap()).
      close_fd(&call->status_r);
      return;
    }
    call->status_len += (size_t)n;
    struct record r;
    while (take_record(call->status_buf, &call->status_len, &r)) {
      if (r.type == RECORD_PID) {
        call->leader = r.value;
        char spawned[12];
        put_u32(spawned, (uint32_t)r.value);
        put_u32(spawned + 4, (uint32_t)call->keeper);
        put_u32(spawned + 8, (uint32_t)call->served); // its keeper lives on, serving the next call
        emit(call->id, S_SPAWNED, spawned, sizeof spawned);
      } else if (r.type == RECORD_FAILED) {
        fail_spawn(call->id, r.value);
      } else if (r.type == RECORD_EXIT) {
        int code = WIFEXITED(r.value) ? WEXITSTATUS(r.value) : -1;
        int sig = WIFSIGNALED(r.value) ? WTERMSIG(r.value) : 0;
        emit_u32s(call->id, S_EXIT, (uint32_t)code, (uint32_t)sig, 2);
      } else if (r.type == RECORD_LIMITS) {
        call->limits_hit |= (unsigned)r.value;
      } else if (r.type == RECORD_RETIRED && call->served) {
        struct server *server = server_of(call->keeper);
        if (server) retire_server(server); // exiting by itself; no next call goes to it
      } else if (r.type == RECORD_END && call->served) {
        call->keeper_reaped = 1; // nothing of the call runs: its keeper reaped it all
        if (call->leader > 0) kill(-call->leader, SIGKILL);
      }
    }
  }
}


/**
 * A call is over once its keeper is reaped and no orphan is left (a keeper that
 * died early hands its processes to the helper, which kills them): nothing of
 * it runs, every writer of its pipes is gone.
 */
static void finish_if_done(struct call *call) {
  if (!call->keeper_reaped || orphans > 0) return;
  if (call->status_r >= 0) read_status(call);
  close_fd(&call->status_r);
  drain(call, &call->out_r, S_STDOUT, S_STDOUT_EOF);
  drain(call, &call->err_r, S_STDERR, S_STDERR_EOF);
  close_fd(&call->in_w);
  free(call->pending);
  call->pending = NULL;
  disarm_then(call);
  free(call->err_tail.buf);
  call->err_tail = (struct stderr_tail){ 0 };
  if (call->limits) call->limits_hit |= limits_end((unsigned)(call - calls));
  if (call->limits_hit) emit_u32s(call->id, S_LIMIT, call->limits_hit, 0, 1);
  emit(call->id, S_DONE, NULL, 0);
  call->active = 0;
}

/**
 * KILL does not rely on the keeper (the plugin may have stopped it, or the
 * kernel may not scope signals). The first SIGKILLs the leader's group and asks
 * the keeper (SIGTERM, and SIGCONT in case it was stopped), which then still
 * reports the leader's exit status and kills the rest; a second (the host asks
 * again when the call does not end) SIGKILLs the keeper itself, whose processes
 * are re-parented to the helper, which kills them as orphans.
 */

static void kill_call(struct call *call) {
  disarm_then(call); // an ended call sends nothing more, whatever its first line is
  if (call->keeper_reaped) return;
  if (call->leader > 0) kill(-call->leader, SIGKILL);
  struct server *server = call->served ? server_of(call->keeper) : NULL;
  if (call->kills++ == 0) {
    if (server) {
      // Told on its line, not by a signal: a signal would also end the next call it serves.
      char order[ORDER_BYTES];
      put_order(order, ORDER_KILL, call->id);
      ssize_t n;
      do n = write(server->ctl, order, sizeof order); while (n < 0 && errno == EINTR);
      if (n != (ssize_t)sizeof order) kill(call->keeper, SIGTERM);
    } else {
      kill(call->keeper, SIGTERM);
    }
    kill(call->keeper, SIGCONT);
    return;
  }
  if (server) retire_server(server);
  else kill(call->keeper, SIGKILL);
  orphans_possible = 1;
}

static int is_live_keeper(pid_t pid) {
  for (size_t i = 0; i < call_count; i++)
    if (calls[i].active && !calls[i].keeper_reaped && calls[i].keeper == pid) return 1;
  return server_of(pid) != NULL;
}

/** /proc/<pid>/stat says zombie: dead, waiting to be reaped. */
static int is_zombie(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 1;
  buf[n] = 0;
  char *paren = strrchr(buf, ')');
  return !paren || paren[1] == 0 || paren[2] == 'Z' || paren[2] == 'X';
}

/** SIGKILLs every child of the helper that is not a live keeper; counts those still alive. */
static void kill_orphans(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)self_pid);
  FILE *f = fopen(path, "re");
  orphans = 0;
  if (!f) return;
  int pid;
  while (fscanf(f, "%d", &pid) == 1) {
    if (is_live_keeper(pid)) continue;
    kill(-pid, SIGKILL); // its group too, when it leads one
    kill(pid, SIGKILL);
    if (!is_zombie(pid)) orphans++;
  }
  fclose(f);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    struct server *server = server_of(pid);
    if (server) {
      // A serving keeper died (killed, or its line broke): its slot starts a new one.
      limits_forget_baseline((unsigned)(server - servers));
      close_fd(&server->ctl);
      server->pid = 0;
    }
    int keeper = 0;
    for (size_t i = 0; i < call_count; i++)
      if (calls[i].active && calls[i].keeper == pid) {
        keeper = 1;
        calls[i].keeper_reaped = 1;
        if (calls[i].leader > 0) kill(-calls[i].leader, SIGKILL);
      }
    // A keeper's clean exit (0) comes only once it has no child left: nothing was re-parented.
    if (!keeper || !WIFEXITED(status) || WEXITSTATUS(status) != 0) orphans_possible = 1;
  }
  if (orphans_possible || orphans > 0) {
    kill_orphans();
    orphans_possible = orphans > 0;
  }
  for (size_t i = 0; i < call_count; i++)
    if (calls[i].active) finish_if_done(&calls[i]);
}

static void shutdown_all(void) {
  shutting_down = 1;
  for (size_t i = 0; i < server_count; i++)
    if (servers[i].pid > 0) retire_server(&servers[i]);
  for (size_t i = 0; i < call_count; i++)
    if (calls[i].active) calls[i].kills++, kill_call(&calls[i]); // straight to SIGKILL
  // Every process of every call is killed (keepers and orphans by SIGKILL); wait for them
  // briefly so the host sees a clean end, and so none is left when the helper is gone.
  for (int round = 0; round < 200; round++) {
    int any = 0;
    reap();
    for (size_t i = 0; i < call_count; i++) any |= calls[i].active;
    if (!any && orphans == 0) break;
    usleep(10000);
  }
  limits_cleanup();
  _exit(EXIT_HOST_GONE);
}

static char *in_buf;
static size_t in_len, in_cap;

static void handle_frames(void) {
  size_t at = 0;
  struct frame frame;
  enum frame_read got;
  while ((got = frame_next(in_buf + at, in_len - at, &frame)) == FRAME_WHOLE) {
    char *payload = frame.payload;
    uint32_t len = frame.len, id = frame.id;
    int type = frame.type;
    struct call *call = type == H_SPAWN ? NULL : find_call(id);
    uint32_t lines;
    const char *data;
    size_t data_len;
    struct then_frame then;
    if (type == H_SPAWN) {
      spawn_call(id, payload, len);
    } else if (call && type == H_STDIN) {
      queue_stdin(call, payload, len);
    } else if (call && type == H_STDIN_LAST && parse_stdin_last(&frame, &lines, &data, &data_len) == 0) {
      call->close_after_lines = lines;
      queue_stdin(call, data, data_len);
      if (call->out_lines >= call->close_after_lines) call->close_stdin = 1, write_stdin(call);
    } else if (call && type == H_THEN && !call->then_line && !call->close_after_lines) {
      // Only before the first stdout byte: after it, the host has seen (or will see) the line without SENT.
      if (parse_then(&frame, &then) == 0 && call->out_bytes == 0 && !call->close_stdin) {
        call->then_line = malloc(then.line_len);
        call->then_request = malloc(then.request_len);
        if (!call->then_line || !call->then_request) die(EXIT_OUT_OF_MEMORY, "out of memory for THEN", 0);
        memcpy(call->then_line, then.line, then.line_len);
        memcpy(call->then_request, then.request, then.request_len);
        call->then_len = then.line_len;
        call->then_request_len = then.request_len;
        call->then_lines = then.lines;
        call->then_matched = 0;
      }
    } else if (call && type == H_STDIN_CLOSE) {
      disarm_then(call);
      call->close_stdin = 1;
      write_stdin(call);
    } else if (call && type == H_KILL) {
      kill_call(call);
    }
    at += FRAME_HEADER + len;
  }
  if (got == FRAME_TOO_LONG) die(EXIT_BAD_FRAME, "a frame from the host is longer than 64 MiB", 0);
  memmove(in_buf, in_buf + at, in_len - at);
  in_len -= at;
}

static int read_control(void) {
  if (in_cap - in_len < CHUNK) {
    in_cap = in_cap ? in_cap * 2 : 4 * CHUNK;
    in_buf = realloc(in_buf, in_cap);
    if (!in_buf) die(EXIT_OUT_OF_MEMORY, "out of memory for the input buffer", 0);
  }
  ssize_t n = read(0, in_buf + in_len, in_cap - in_len);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return 0;
  in_len += (size_t)n;
  handle_frames();
  return 1;
}

int main(int argc, char **argv) {
  // --probe: what this kernel offers the helper, for `plugin show` on a host with no call running.
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    limits_init();
    printf("landlock-abi %d\nseccomp %d\ncapabilities-droppable %d\n", landlock_abi(), seccomp_available(),
           capabilities_droppable());
    // One word, then why not (containment.ts reads `^namespaces (\S+)`).
    char why[160] = "";
    int isolation = isolation_available(why, sizeof why);
    printf("namespaces %d%s%s\n", isolation, isolation ? "" : " ", why);
    limits_print_probe();
    limits_cleanup();
    return 0;
  }
  self_pid = getpid();
  signal(SIGPIPE, SIG_IGN);
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGHUP);
  sigaddset(&handled, SIGINT);
  sigprocmask(SIG_BLOCK, &handled, NULL);
  int signals = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  // The worker's death reaches the helper as SIGTERM (and as EOF on stdin).
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) return EXIT_HOST_GONE;
  // Whatever a dead keeper leaves behind is re-parented here, not to init (see kill_orphans).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (signals < 0) die(EXIT_SETUP_FAILED, "no signalfd", errno);
  if (devnull < 0) die(EXIT_SETUP_FAILED, "cannot open /dev/null", errno);
  limits_init();
  char why_not[160];
  unsigned isolation = isolation_available(why_not, sizeof why_not) ? LIMIT_DISK : 0u;
  // --filter none|allow: this helper's calls all get the seccomp filter of that network
  // policy; installed once here, inherited by every keeper and plugin (none per call).
  if (argc == 3 && strcmp(argv[1], "--filter") == 0 && seccomp_available()) {
    int no_network = strcmp(argv[2], "none") == 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || install_seccomp(no_network) != 0)
      die(EXIT_SETUP_FAILED, "cannot install the helper's seccomp filter", errno);
    helper_filter = no_network ? HELPER_FILTER_NO_NETWORK : HELPER_FILTER_ALLOW_NETWORK;
  }
  char hello[12];
  put_u32(hello, (uint32_t)landlock_abi());
  put_u32(hello + 4, (uint32_t)seccomp_available());
  put_u32(hello + 8, limits_available() | isolation);
  emit(0, S_HELLO, hello, sizeof hello);
  flush_out();
  struct pollfd *polls = NULL;
  struct call **owners = NULL;
  size_t poll_cap = 0;
  for (;;) {
    size_t need = 2 + call_count * 4;
    if (need > poll_cap) {
      poll_cap = need * 2;
      polls = realloc(polls, poll_cap * sizeof *polls);
      owners = realloc(owners, poll_cap * sizeof *owners);
      if (!polls || !owners) die(EXIT_OUT_OF_MEMORY, "out of memory for the poll set", 0);
    }
    size_t count = 0;
    polls[count++] = (struct pollfd){ 0, POLLIN, 0 };
    polls[count++] = (struct pollfd){ signals, POLLIN, 0 };
    for (size_t i = 0; i < call_count; i++) {
      struct call *call = &calls[i];
      if (!call->active) continue;
      if (call->out_r >= 0) owners[count] = call, polls[count++] = (struct pollfd){ call->out_r, POLLIN, 0 };
      if (call->err_r >= 0) owners[count] = call, polls[count++] = (struct pollfd){ call->err_r, POLLIN, 0 };
      if (call->status_r >= 0) owners[count] = call, polls[count++] = (struct pollfd){ call->status_r, POLLIN, 0 };
      if (call->in_w >= 0 && call->pending_len > 0) owners[count] = call, polls[count++] = (struct pollfd){ call->in_w, POLLOUT, 0 };
    }
    // While orphans are dying, look again soon: a grandchild is re-parented without a signal.
    int hold = flush_due();
    int wait = orphans > 0 ? 20 : -1;
    if (hold >= 0 && (wait < 0 || hold < wait)) wait = hold;
    int ready = poll(polls, count, wait);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(EXIT_POLL_FAILED, "poll failed", errno);
    }
    for (size_t i = 2; i < count; i++) {
      if (!polls[i].revents) continue;
      struct call *call = owners[i];
      if (!call->active) continue;
      int fd = polls[i].fd;
      if (fd == call->out_r) relay(call, &call->out_r, S_STDOUT, S_STDOUT_EOF);
      else if (fd == call->err_r) relay(call, &call->err_r, S_STDERR, S_STDERR_EOF);
      else if (fd == call->status_r) {
        read_status(call);
        if (call->served && call->keeper_reaped) finish_if_done(call);
      }
      else if (fd == call->in_w) {
        if (polls[i].revents & (POLLERR | POLLHUP)) call->pending_len = 0, call->close_stdin = 1;
        write_stdin(call);
      }
    }
    if (ready == 0 && orphans > 0) reap();
    if (polls[1].revents) {
      struct signalfd_siginfo info;
      int stop = 0;
      while (read(signals, &info, sizeof info) == sizeof info)
        if (info.ssi_signo != SIGCHLD) stop = 1;
      reap();
      if (stop) {
        flush_out();
        shutdown_all();
      }
    }
    if (polls[0].revents && !read_control()) {
      flush_out();
      shutdown_all();
    }
  }
}
