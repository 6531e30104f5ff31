// The per-call keeper of sy-spawner (keeper.h): forked from the helper without
// exec, it becomes a child subreaper with a parent-death signal, starts the
// plugin in its own session, reports its pid and exit, and kills every process
// of the call (the leader's group and each of its own children, repeatedly,
// orphans re-parented to it included) until it has no child left.
#define _GNU_SOURCE
#include "keeper.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w, int status_w) {
  prctl(PR_SET_NAME, "sy-keeper");
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != helper) _exit(1);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(devnull, 2);
  int keep[] = { 0, 1, 2, in_r, out_w, err_w, status_w };
  // Ascending for close_all_but: the helper's descriptors are all above 2, in any order.
  for (int i = 4; i < 7; i++)
    for (int j = i; j > 3 && keep[j - 1] > keep[j]; j--) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  close_all_but(keep, 7);

  // The leader by posix_spawn (clone with CLONE_VM|CLONE_VFORK: no copy of
  // this process's page tables, as a fork would make): its own session,
  // every signal at its default and none blocked, the call's pipes as
  // 0/1/2 (the others are close-on-exec), the package directory as cwd.
  // glibc reports a failed chdir or exec as the return value.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w, 2);
  posix_spawn_file_actions_addchdir_np(&actions, req->cwd);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t leader = 0;
  int spawn_error = posix_spawn(&leader, req->path, &actions, &attr, req->argv, req->envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in_r);
  close(out_w);
  close(err_w);
  if (spawn_error) {
    report(status_w, 'F', spawn_error);
    _exit(1);
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
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == leader) {
        report(status_w, 'X', status);
        // The leader is gone: whatever it left behind ends with it (the host's grace is over).
        killing = 1;
      }
    }
    if (pid < 0 && errno == ECHILD) _exit(0);
    if (killing) {
      kill(-leader, SIGKILL);
      kill_children();
    }
    struct timespec tick = { 0, 100 * 1000 * 1000 };
    int sig = sigtimedwait(&wanted, NULL, killing ? &tick : NULL);
    if (sig == SIGTERM || sig == SIGHUP || sig == SIGINT) killing = 1;
  }
}
