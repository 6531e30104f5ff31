// The per-call keeper of sy-spawner (keeper.h): forked from the helper without
// exec, it becomes a child subreaper with a parent-death signal, starts the
// plugin in its own session, reports its pid and exit, and kills every process
// of the call (the leader's group and each of its own children, repeatedly,
// orphans re-parented to it included) until it has no child left.
#define _GNU_SOURCE
#include "keeper.h"
#include "confine.h"
#include "isolate.h"
#include "limits.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum helper_filter helper_filter = HELPER_FILTER_NONE;

static void report(int fd, enum record_type type, int32_t value) {
  struct record r = { (char)type, value };
  ssize_t n;
  do n = write(fd, &r, sizeof r); while (n < 0 && errno == EINTR);
}

static void close_all_but(const int *keep, int count) {
  // keep[] ascending; close every gap between them (close_range, else one by one).
  unsigned lo = 0;
  for (int i = 0; i <= count; i++) {
    unsigned hi = i < count ? (unsigned)keep[i] : ~0u;
    if (hi > lo) {
      if (syscall(SYS_close_range, lo, hi - 1, 0) != 0) {
        unsigned top = hi - 1 > 65535 ? 65535 : hi - 1;
        for (unsigned fd = lo; fd <= top; fd++) close((int)fd);
      }
    }
    if (i < count) lo = (unsigned)keep[i] + 1;
  }
}

/** SIGKILL every child of this process: /proc/self/task/<pid>/children, else a /proc scan. */
static int kill_children(void) {
  int killed = 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
  FILE *f = fopen(path, "re");
  if (f) {
    int pid;
    while (fscanf(f, "%d", &pid) == 1) {
      kill(pid, SIGKILL);
      killed++;
    }
    fclose(f);
    return killed;
  }
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  struct dirent *entry;
  pid_t self = getpid();
  while ((entry = readdir(proc))) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char stat[64], buf[512];
    snprintf(stat, sizeof stat, "/proc/%ld/stat", pid);
    int fd = open(stat, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    char *paren = strrchr(buf, ')');
    int ppid;
    if (paren && sscanf(paren + 2, "%*c %d", &ppid) == 1 && ppid == self) {
      kill((pid_t)pid, SIGKILL);
      killed++;
    }
  }
  closedir(proc);
  return killed;
}

/**
 * What a serving keeper keeps from call to call: the signals whose disposition is not the default (the
 * plugin's process resets only those) and what it set on itself for confined calls (confine.h). A
 * keeper forked for one call has none of it.
 */
struct keeper_state {
  int changed_signals[NSIG];
  int changed_count;
  struct confine_base base;
  int base_tried;
};

/** The signals this process does not leave at their default (the helper ignores SIGPIPE). */
static void find_changed_signals(struct keeper_state *state) {
  state->changed_count = 0;
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction action;
    // One that cannot be asked (32, 33: glibc's own) is reset as before.
    if (sigaction(sig, NULL, &action) != 0 || action.sa_handler != SIG_DFL)
      state->changed_signals[state->changed_count++] = sig;
  }
}

struct start_args {
  const struct spawn_request *req;
  int in_r, out_w, err_w, ruleset, seccomp, exec_fd;
  const struct limit_watch *watch;
  /** SPAWN_ISOLATE: the call's tmpfs and where it goes (isolate.h). */
  const struct isolation *iso;
  /** The keeper is in the slot's cgroups already: the plugin is born there. */
  int joined;
  /** A serving keeper's state (NULL: a keeper of one call, the plugin's process does every step). */
  const struct keeper_state *state;
  /** Set by the child when it cannot exec (the parent reads it once the vfork-style clone returns). */
  volatile int error;
};

/**
 * The host's open descriptor of the verified executable, reopened through
 * /proc (the same file, whatever its path names now). Close-on-exec for a
 * binary; kept open for a `#!` script, whose interpreter the kernel starts
 * with /dev/fd/<n> as the script to read (so it reads the verified file too).
 */
static int open_verified(const char *proc_path) {
  int fd = open(proc_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char magic[2];
  if (pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!') fcntl(fd, F_SETFD, 0);
  return fd;
}

static char start_stack[64 * 1024] __attribute__((aligned(16)));

/** The plugin's process from clone to exec; shares the keeper's memory until then, so it only makes system calls. */
static int start_plugin(void *arg) {
  struct start_args *a = arg;
  sigset_t none;
  sigemptyset(&none);
  setsid();
  // A serving keeper knows which signals are not at their default (an exec resets handled ones, not
  // ignored ones): a system call for each of those instead of one for every signal.
  if (a->state) {
    for (int i = 0; i < a->state->changed_count; i++) signal(a->state->changed_signals[i], SIG_DFL);
  } else {
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  }
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0 ||
      ((a->req->flags & SPAWN_ISOLATE) && isolation_enter(a->req, a->iso) != 0) || chdir(a->req->cwd) != 0 ||
      ((a->req->flags & SPAWN_LIMITS) && limits_apply(&a->req->limits, a->watch, a->joined) != 0) ||
      ((a->req->flags & SPAWN_CONFINE) && confine_plugin(a->ruleset, a->seccomp, (a->req->flags & SPAWN_NO_NETWORK) != 0,
                                                         a->state ? &a->state->base : NULL) != 0)) {
    a->error = errno;
    _exit(CHILD_EXEC_FAILED);
  }
  if (a->exec_fd >= 0) syscall(SYS_execveat, a->exec_fd, "", a->req->argv, a->req->envp, AT_EMPTY_PATH);
  else execve(a->req->path, a->req->argv, a->req->envp);
  a->error = errno;
  _exit(CHILD_EXEC_FAILED);
}

/** The keeper's process: its name, parent-death signal, subreaper role and /dev/null as 0–2. */
static void become_keeper(pid_t helper, int devnull) {
  prctl(PR_SET_NAME, "sy-keeper");
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != helper) _exit(KEEPER_NOT_STARTED);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(devnull, 2);
}

/** Closes every descriptor but 0–2 and the wanted ones (-1 entries skipped). */
static void keep_only(const int *wanted, size_t count) {
  int keep[3 + 16] = { 0, 1, 2 };
  int kept = 3;
  // Ascending for close_all_but: the helper's descriptors are all above 2, in any order.
  for (size_t i = 0; i < count && kept < (int)(sizeof keep / sizeof keep[0]); i++) {
    if (wanted[i] < 0) continue;
    int j = kept++;
    for (; j > 3 && keep[j - 1] > wanted[i]; j--) keep[j] = keep[j - 1];
    keep[j] = wanted[i];
  }
  close_all_but(keep, kept);
}

enum call_end { CALL_ENDED = 0, CALL_NOT_STARTED = 1, CALL_ENDED_RETIRE = 2 };

/**
 * One call, from the plugin's start to the moment nothing of it runs: reports
 * P (or F), X and L on `status_w`. `ctl` (a serving keeper's line to the helper,
 * else -1) may say K (kill the call) or close (the helper is gone). SIGTERM,
 * SIGHUP, SIGINT end the call too — and a serving keeper then retires.
 */
static enum call_end start_and_wait(const struct spawn_request *req, const struct limit_watch *watch, int joined,
                                    struct keeper_state *state, int in_r, int out_w, int err_w, int status_w, int ctl,
                                    int signals);

/** run_call owns the call's stdin, stdout and stderr ends: closed on every return, started or not. */
static enum call_end run_call(const struct spawn_request *req, const struct limit_watch *watch, int joined,
                              struct keeper_state *state, int in_r, int out_w, int err_w, int status_w, int ctl,
                              int signals) {
  enum call_end end = start_and_wait(req, watch, joined, state, in_r, out_w, err_w, status_w, ctl, signals);
  if (end == CALL_NOT_STARTED) {
    close(in_r);
    close(out_w);
    close(err_w);
  }
  return end;
}

static enum call_end start_and_wait(const struct spawn_request *req, const struct limit_watch *watch, int joined,
                                    struct keeper_state *state, int in_r, int out_w, int err_w, int status_w, int ctl,
                                    int signals) {
  // The leader by clone(CLONE_VM|CLONE_VFORK), as posix_spawn does it (no
  // copy of this process's page tables), but with our own code between the
  // clone and the exec: its own session, every signal at its default and
  // none blocked, the call's pipes as 0/1/2 (the others are close-on-exec),
  // the package directory as cwd, then the confinement (confine.h).
  // Where the kernel lacks a mechanism, the call runs without it unless the
  // host requires confinement (the host says per host what is enforced).
  int ruleset = -1, seccomp = 0;
  if (req->flags & SPAWN_CONFINE) {
    ruleset = req->ruleset;
    int no_network = (req->flags & SPAWN_NO_NETWORK) != 0;
    // The helper's own filter already binds this call when it is as strict as the call needs;
    // a helper filtered for no network cannot start a call that may use it (the host never asks).
    if (helper_filter == HELPER_FILTER_NO_NETWORK && !no_network) {
      report(status_w, RECORD_FAILED, EPERM);
      return CALL_NOT_STARTED;
    }
    int inherited = helper_filter == HELPER_FILTER_NO_NETWORK || (helper_filter == HELPER_FILTER_ALLOW_NETWORK && !no_network);
    seccomp = inherited ? 0 : seccomp_available();
    int lacking = (ruleset < 0 && req->ruleset_error == ENOSYS) || !(seccomp || inherited);
    if ((ruleset < 0 && req->ruleset_error != ENOSYS) || (lacking && (req->flags & SPAWN_REQUIRE_CONFINEMENT))) {
      report(status_w, RECORD_FAILED, ruleset < 0 ? req->ruleset_error : ENOSYS);
      return CALL_NOT_STARTED;
    }
  }
  int exec_fd = -1;
  if (req->flags & SPAWN_EXEC_FD) {
    exec_fd = open_verified(req->path);
    if (exec_fd < 0) {
      report(status_w, RECORD_FAILED, errno);
      return CALL_NOT_STARTED;
    }
  }
  // Once, at a serving keeper's first confined call: what does not change from call to call is set on it.
  if (state && (req->flags & SPAWN_CONFINE) && !state->base_tried) {
    state->base_tried = 1;
    if (confine_prepare_keeper(&state->base) != 0) state->base.prepared = 0;
  }
  // Isolated: born in its own IPC and mount namespaces (isolate.h), with the tmpfs made here.
  struct isolation iso = { -1, "" };
  int isolate = (req->flags & SPAWN_ISOLATE) != 0;
  if (isolate && isolation_prepare(req, &iso) != 0) {
    int error = errno;
    if (exec_fd >= 0) close(exec_fd);
    report(status_w, RECORD_FAILED, error);
    return CALL_NOT_STARTED;
  }
  struct start_args args = { req, in_r, out_w, err_w, ruleset, seccomp, exec_fd, watch, &iso, joined, state, 0 };
  pid_t leader = clone(start_plugin, start_stack + sizeof start_stack,
                       CLONE_VM | CLONE_VFORK | SIGCHLD | (isolate ? ISOLATE_CLONE_FLAGS : 0), &args);
  int spawn_error = leader < 0 ? errno : args.error;
  if (exec_fd >= 0) close(exec_fd);
  if (spawn_error) {
    isolation_close(&iso);
    // A child that failed before its exec has exited; reap it so the keeper ends with no child.
    if (leader > 0) waitpid(leader, NULL, 0);
    report(status_w, RECORD_FAILED, spawn_error);
    return CALL_NOT_STARTED; // run_call closes the pipes' ends
  }
  close(in_r);
  close(out_w);
  close(err_w);
  report(status_w, RECORD_PID, leader);

  int killing = 0, retire = 0;
  unsigned hit = 0;
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      hit |= limits_of_status(status);
      if (pid == leader) {
        report(status_w, RECORD_EXIT, status);
        // The leader is gone: whatever it left behind ends with it (the host's grace is over).
        killing = 1;
      }
    }
    if (pid < 0 && errno == ECHILD) {
      hit |= isolation_end(req, &iso); // its files are gone with it
      if (hit) report(status_w, RECORD_LIMITS, (int32_t)hit);
      return retire ? CALL_ENDED_RETIRE : CALL_ENDED;
    }
    if (killing) {
      kill(-leader, SIGKILL);
      kill_children();
    }
    struct pollfd polls[2] = { { signals, POLLIN, 0 }, { ctl, POLLIN, 0 } };
    int ready = poll(polls, ctl >= 0 ? 2 : 1, killing ? 100 : -1);
    if (ready > 0 && polls[0].revents) {
      struct signalfd_siginfo info;
      while (read(signals, &info, sizeof info) == sizeof info)
        if (info.ssi_signo != SIGCHLD) killing = 1, retire = 1;
    }
    if (ready > 0 && ctl >= 0 && polls[1].revents) {
      char order[ORDER_BYTES];
      uint32_t id;
      ssize_t n = read(ctl, order, sizeof order);
      // A call the host had to kill takes its keeper along: the next call gets a fresh one.
      if (n == ORDER_BYTES && get_order(order, &id) == ORDER_KILL) killing = 1, retire = 1;
      else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) killing = 1, retire = 1; // the helper is gone
    }
  }
}

/** SIGCHLD, SIGTERM, SIGHUP and SIGINT (blocked, inherited from the helper) as a descriptor. */
static int keeper_signals(void) {
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  sigaddset(&wanted, SIGTERM);
  sigaddset(&wanted, SIGHUP);
  sigaddset(&wanted, SIGINT);
  sigprocmask(SIG_BLOCK, &wanted, NULL);
  return signalfd(-1, &wanted, SFD_CLOEXEC | SFD_NONBLOCK);
}

void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w, int status_w) {
  become_keeper(helper, devnull);
  // The slot's cgroup files, opened by the helper (limits.h): kept, like the call's pipes and ruleset.
  struct limit_watch watch = { -1, -1, -1, -1, 0, 0 };
  if ((req->flags & SPAWN_LIMITS) && limits_watch(req->slot, &req->limits, &watch) != 0) {
    report(status_w, RECORD_FAILED, errno);
    _exit(KEEPER_NOT_STARTED);
  }
  int wanted[] = { in_r, out_w, err_w, status_w, req->ruleset,
                   watch.pids_procs, watch.pids_events, watch.memory_procs, watch.memory_events };
  keep_only(wanted, sizeof wanted / sizeof wanted[0]);
  int signals = keeper_signals();
  if (signals < 0) {
    report(status_w, RECORD_FAILED, errno);
    _exit(KEEPER_NOT_STARTED);
  }
  enum call_end end = run_call(req, &watch, 0, NULL, in_r, out_w, err_w, status_w, -1, signals);
  if (end == CALL_NOT_STARTED) _exit(KEEPER_NOT_STARTED);
  if (req->flags & SPAWN_LIMITS) limits_keeper_end(); // the cgroups' counters: the helper's (limits_end)
  _exit(KEEPER_DONE);
}

/** Reads exactly `len` bytes (the helper's writes of one request are whole); 0 or -1. */
static int read_all(int fd, char *at, size_t len) {
  while (len > 0) {
    ssize_t n = read(fd, at, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    at += n;
    len -= (size_t)n;
  }
  return 0;
}

void keeper_serve(int ctl, pid_t helper, int devnull, unsigned slot, int limits) {
  become_keeper(helper, devnull);
  // It outlives its calls: a process of the same user (without CAP_SYS_PTRACE) cannot ptrace it to
  // reach the next call (Landlock's scoping already keeps a confined plugin's hands off it).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // In its slot's cgroups once (limits.h): its calls' plugins are born there, no migration per call.
  struct limit_watch watch = { -1, -1, -1, -1, 0, 0 };
  int joined = 0;
  if (limits) {
    struct limits none = { 0, 0, 0, 0, 0, 0 };
    if (limits_watch(slot, &none, &watch) != 0 || limits_join(&watch) != 0) _exit(KEEPER_NOT_STARTED);
    joined = 1;
    // The memory cgroup's OOM killer takes the plugin, never its keeper.
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
      ssize_t n = write(adj, "-1000", 5);
      (void)n;
      close(adj);
    }
  }
  int wanted[] = { ctl, watch.pids_procs, watch.pids_events, watch.memory_procs, watch.memory_events };
  keep_only(wanted, sizeof wanted / sizeof wanted[0]);
  int signals = keeper_signals();
  if (signals < 0) _exit(KEEPER_NOT_STARTED);
  static struct keeper_state state;
  find_changed_signals(&state);
  for (;;) {
    // A request: ORDER_SPAWN, u32 length, the SPAWN payload; the call's pipes (and ruleset) ride on it.
    char head[ORDER_BYTES];
    int fds[5] = { -1, -1, -1, -1, -1 };
    char control[CMSG_SPACE(sizeof fds)];
    struct iovec iov = { head, sizeof head };
    struct msghdr msg = { 0 };
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do n = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL); while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof head) _exit(KEEPER_DONE); // the helper is gone (or spoke out of turn)
    size_t count = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (count > 5) count = 5;
        memcpy(fds, CMSG_DATA(c), count * sizeof(int));
      }
    uint32_t len;
    if (get_order(head, &len) != ORDER_SPAWN || count < 4) _exit(KEEPER_NOT_STARTED);
    char *payload = malloc(len ? len : 1);
    struct spawn_request req;
    char **list = NULL;
    if (!payload || read_all(ctl, payload, len) != 0 || parse_spawn(payload, len, &req, &list) != 0) _exit(KEEPER_NOT_STARTED);
    // A signal that came while it was idle is not this call's: an outside kill, or its parent's
    // death (then it goes). The helper itself asks on the line.
    struct signalfd_siginfo info;
    while (read(signals, &info, sizeof info) == sizeof info)
      if (info.ssi_signo != SIGCHLD && getppid() != helper) _exit(KEEPER_DONE);
    req.slot = slot;
    req.ruleset = count > 4 ? fds[4] : -1;
    req.ruleset_error = count > 4 ? 0 : EINVAL;
    // The pipes' descriptors arrive close-on-exec: the plugin's dup2 onto 0–2 clears it there.
    enum call_end end = run_call(&req, &watch, joined, &state, fds[0], fds[1], fds[2], fds[3], ctl, signals);
    if (req.ruleset >= 0) close(req.ruleset);
    // Nothing of the call runs any more: said before the pipe closes (a keeper that dies closes it too,
    // and then only its reaping tells the helper that its orphans are its to kill).
    if (end == CALL_ENDED_RETIRE) report(fds[3], RECORD_RETIRED, 0);
    report(fds[3], RECORD_END, 0);
    close(fds[3]);
    free(list);
    free(payload);
    if (end == CALL_ENDED_RETIRE) _exit(KEEPER_DONE);
  }
}
