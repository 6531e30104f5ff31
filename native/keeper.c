// The per-call keeper of sy-spawner (keeper.h): forked from the helper without
// exec, it becomes a child subreaper with a parent-death signal, starts the
// plugin in its own session, reports its pid and exit, and kills every process
// of the call (the leader's group and each of its own children, repeatedly,
// orphans re-parented to it included) until it has no child left.
#define _GNU_SOURCE
#include "keeper.h"
#include "confine.h"
#include "limits.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void report(int fd, char type, int32_t value) {
  struct record r = { type, value };
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

struct start_args {
  const struct spawn_request *req;
  int in_r, out_w, err_w, ruleset, seccomp, exec_fd;
  const struct limit_watch *watch;
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
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0 || chdir(a->req->cwd) != 0 ||
      ((a->req->flags & SPAWN_LIMITS) && limits_apply(&a->req->limits, a->watch) != 0) ||
      ((a->req->flags & SPAWN_CONFINE) &&
       confine_self(a->ruleset, a->seccomp, (a->req->flags & SPAWN_NO_NETWORK) != 0) != 0)) {
    a->error = errno;
    _exit(CHILD_EXEC_FAILED);
  }
  if (a->exec_fd >= 0) syscall(SYS_execveat, a->exec_fd, "", a->req->argv, a->req->envp, AT_EMPTY_PATH);
  else execve(a->req->path, a->req->argv, a->req->envp);
  a->error = errno;
  _exit(CHILD_EXEC_FAILED);
}

void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w, int status_w) {
  prctl(PR_SET_NAME, "sy-keeper");
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != helper) _exit(KEEPER_NOT_STARTED);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(devnull, 2);
  // The slot's cgroup files, opened by the helper (limits.h): kept, like the call's pipes and ruleset.
  struct limit_watch watch = { -1, -1, -1, -1, 0, 0 };
  if ((req->flags & SPAWN_LIMITS) && limits_watch(req->slot, &req->limits, &watch) != 0) {
    report(status_w, 'F', errno);
    _exit(KEEPER_NOT_STARTED);
  }
  int wanted_fds[] = { in_r, out_w, err_w, status_w, req->ruleset,
                       watch.pids_procs, watch.pids_events, watch.memory_procs, watch.memory_events };
  int keep[3 + sizeof wanted_fds / sizeof wanted_fds[0]] = { 0, 1, 2 };
  int kept = 3;
  // Ascending for close_all_but: the helper's descriptors are all above 2, in any order.
  for (size_t i = 0; i < sizeof wanted_fds / sizeof wanted_fds[0]; i++) {
    if (wanted_fds[i] < 0) continue;
    int j = kept++;
    for (; j > 3 && keep[j - 1] > wanted_fds[i]; j--) keep[j] = keep[j - 1];
    keep[j] = wanted_fds[i];
  }
  close_all_but(keep, kept);

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
      report(status_w, 'F', EPERM);
      _exit(KEEPER_NOT_STARTED);
    }
    int inherited = helper_filter == HELPER_FILTER_NO_NETWORK || (helper_filter == HELPER_FILTER_ALLOW_NETWORK && !no_network);
    seccomp = inherited ? 0 : seccomp_available();
    int lacking = (ruleset < 0 && req->ruleset_error == ENOSYS) || !(seccomp || inherited);
    if ((ruleset < 0 && req->ruleset_error != ENOSYS) || (lacking && (req->flags & SPAWN_REQUIRE_CONFINEMENT))) {
      report(status_w, 'F', ruleset < 0 ? req->ruleset_error : ENOSYS);
      _exit(KEEPER_NOT_STARTED);
    }
  }
  int exec_fd = -1;
  if (req->flags & SPAWN_EXEC_FD) {
    exec_fd = open_verified(req->path);
    if (exec_fd < 0) {
      report(status_w, 'F', errno);
      _exit(KEEPER_NOT_STARTED);
    }
  }
  struct start_args args = { req, in_r, out_w, err_w, ruleset, seccomp, exec_fd, &watch, 0 };
  pid_t leader = clone(start_plugin, start_stack + sizeof start_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int spawn_error = leader < 0 ? errno : args.error;
  if (ruleset >= 0) close(ruleset); // the keeper's copy; the helper keeps its cached one
  if (exec_fd >= 0) close(exec_fd);
  close(in_r);
  close(out_w);
  close(err_w);
  if (spawn_error) {
    // A child that failed before its exec has exited; reap it so the keeper ends with no child.
    if (leader > 0) waitpid(leader, NULL, 0);
    report(status_w, 'F', spawn_error);
    _exit(KEEPER_NOT_STARTED);
  }
  report(status_w, 'P', leader);

  // SIGCHLD, SIGTERM, SIGHUP and SIGINT are blocked (inherited from the helper): wait for them synchronously.
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  sigaddset(&wanted, SIGTERM);
  sigaddset(&wanted, SIGHUP);
  sigaddset(&wanted, SIGINT);
  sigprocmask(SIG_BLOCK, &wanted, NULL);
  int killing = 0;
  unsigned hit = 0;
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      hit |= limits_of_status(status);
      if (pid == leader) {
        report(status_w, 'X', status);
        // The leader is gone: whatever it left behind ends with it (the host's grace is over).
        killing = 1;
      }
    }
    if (pid < 0 && errno == ECHILD) {
      if (req->flags & SPAWN_LIMITS) limits_keeper_end(); // the cgroups' counters: the helper's (limits_end)
      if (hit) report(status_w, 'L', (int32_t)hit);
      _exit(KEEPER_DONE);
    }
    if (killing) {
      kill(-leader, SIGKILL);
      kill_children();
    }
    struct timespec tick = { 0, 100 * 1000 * 1000 };
    int sig = sigtimedwait(&wanted, NULL, killing ? &tick : NULL);
    if (sig == SIGTERM || sig == SIGHUP || sig == SIGINT) killing = 1;
  }
}
