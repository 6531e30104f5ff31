// Per-call namespaces of a plugin call (isolate.h). Raw system calls for the
// mount API (fsopen, fsconfig, fsmount, move_mount): the build's headers may
// predate them, and glibc's <sys/mount.h> clashes with the kernel's.
#define _GNU_SOURCE
#include "isolate.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_move_mount
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#endif
#define SY_FSOPEN_CLOEXEC 0x1
#define SY_FSCONFIG_SET_STRING 1
#define SY_FSCONFIG_CMD_CREATE 6
#define SY_FSMOUNT_CLOEXEC 0x1
#define SY_MOUNT_ATTR_NOSUID 0x2
#define SY_MOUNT_ATTR_NODEV 0x4
#define SY_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define CAP_SYS_ADMIN_BIT 21

/** Every inode costs at least a page of the budget: a call cannot fill kernel memory with empty files. */
#define BYTES_PER_INODE 4096ull

static int config(int fs, const char *key, const char *value) {
  return (int)syscall(SYS_fsconfig, fs, SY_FSCONFIG_SET_STRING, key, value, 0);
}

/** A new tmpfs of `bytes` (mode 0700, no setuid, no devices), as a detached mount; -1 with errno. */
static int make_tmpfs(unsigned long long bytes) {
  int fs = (int)syscall(SYS_fsopen, "tmpfs", SY_FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  char size[32], inodes[32];
  unsigned long long count = bytes / BYTES_PER_INODE;
  snprintf(size, sizeof size, "%llu", bytes);
  snprintf(inodes, sizeof inodes, "%llu", count < 64 ? 64 : count);
  int mount_fd = -1;
  if (config(fs, "size", size) == 0 && config(fs, "nr_inodes", inodes) == 0 && config(fs, "mode", "0700") == 0 &&
      syscall(SYS_fsconfig, fs, SY_FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
    mount_fd = (int)syscall(SYS_fsmount, fs, SY_FSMOUNT_CLOEXEC, SY_MOUNT_ATTR_NOSUID | SY_MOUNT_ATTR_NODEV);
  int error = errno;
  close(fs);
  errno = error;
  return mount_fd;
}

int isolation_available(char *why, size_t size) {
  struct {
    uint32_t version;
    int pid;
  } header = { 0x20080522, 0 };
  struct {
    uint32_t effective, permitted, inheritable;
  } data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  if (syscall(SYS_capget, &header, data) != 0 || !(data[0].effective & (1u << CAP_SYS_ADMIN_BIT))) {
    snprintf(why, size, "the worker lacks CAP_SYS_ADMIN (it is not root)");
    return 0;
  }
  // Tried for real, in a child: the namespaces and a tmpfs as a call gets them.
  pid_t child = fork();
  if (child == 0) {
    if (unshare(ISOLATE_CLONE_FLAGS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(1);
    _exit(make_tmpfs(1 << 20) < 0 ? 2 : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(why, size, "%s",
             child < 0 ? "cannot fork to try" :
             WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "cannot create IPC and mount namespaces" :
                                                             "cannot create a tmpfs with fsopen (kernel before 5.2?)");
    return 0;
  }
  return 1;
}

int isolation_prepare(const struct spawn_request *req, struct isolation *iso) {
  iso->tmpfs = -1;
  iso->parent[0] = 0;
  if (!req->tmp || !req->limits.disk) return 0;
  // The tmpfs goes on tmp, whose parent (the call's own scratch directory, where its Landlock write
  // rule is) becomes read-only: Landlock skips a mount point hidden by a mount, so the rule must be on
  // a directory above the tmpfs, and nothing but the tmpfs may be writable beneath it.
  size_t len = strlen(req->tmp);
  const char *slash = strrchr(req->tmp, '/');
  if (req->tmp[0] != '/' || len >= sizeof iso->parent || !slash || slash == req->tmp || slash[1] == 0) {
    errno = EINVAL;
    return -1;
  }
  memcpy(iso->parent, req->tmp, (size_t)(slash - req->tmp));
  iso->parent[slash - req->tmp] = 0;
  iso->tmpfs = make_tmpfs(req->limits.disk);
  return iso->tmpfs < 0 ? -1 : 0;
}

int isolation_enter(const struct spawn_request *req, const struct isolation *iso) {
  // Private: no mount of the call reaches the host's namespace (nor one of the host the call).
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
  if (iso->tmpfs < 0) return 0;
  if (mount(iso->parent, iso->parent, NULL, MS_BIND, NULL) != 0 ||
      mount(NULL, iso->parent, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
    return -1;
  // move_mount does not follow a symlink at the target (no MOVE_MOUNT_T_SYMLINKS).
  return (int)syscall(SYS_move_mount, iso->tmpfs, "", AT_FDCWD, req->tmp, SY_MOVE_MOUNT_F_EMPTY_PATH);
}

/** A regular file of at least `limit` bytes under `dir` (closed here); `*budget` entries at most. */
static int file_at_limit(int dir, unsigned long long limit, int *budget, int depth) {
  DIR *listing = fdopendir(dir);
  if (!listing) {
    close(dir);
    return 0;
  }
  int found = 0;
  struct dirent *entry;
  while (!found && *budget > 0 && (entry = readdir(listing))) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    (*budget)--;
    struct stat st;
    if (fstatat(dirfd(listing), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size >= limit) found = 1;
    else if (S_ISDIR(st.st_mode) && depth < 16) {
      int sub = openat(dirfd(listing), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) found = file_at_limit(sub, limit, budget, depth + 1);
    }
  }
  closedir(listing);
  return found;
}

unsigned isolation_end(const struct spawn_request *req, struct isolation *iso) {
  if (iso->tmpfs < 0) return 0;
  unsigned hit = 0;
  struct statfs st;
  if (fstatfs(iso->tmpfs, &st) == 0) {
    if (st.f_bfree == 0 || st.f_ffree == 0) hit |= LIMIT_DISK;
    // Its root is the one inode an unused tmpfs has: nothing to look at in the usual call.
    if (req->limits.file_size && st.f_files - st.f_ffree > 1) {
      int root = openat(iso->tmpfs, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      int budget = 1000;
      if (root >= 0 && file_at_limit(root, req->limits.file_size, &budget, 0)) hit |= LIMIT_FILE_SIZE;
    }
  }
  isolation_close(iso);
  return hit;
}

void isolation_close(struct isolation *iso) {
  if (iso->tmpfs >= 0) close(iso->tmpfs);
  iso->tmpfs = -1;
}
