// Per-call namespaces of a plugin call (isolate.h). Raw system calls for the
// mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, mount_setattr): the
// build's headers may predate them, and glibc's <sys/mount.h> clashes with the kernel's.
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
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define SY_FSOPEN_CLOEXEC 0x1
#define SY_FSCONFIG_SET_STRING 1
#define SY_FSCONFIG_CMD_CREATE 6
#define SY_FSMOUNT_CLOEXEC 0x1
#define SY_MOUNT_ATTR_NOSUID 0x2
#define SY_MOUNT_ATTR_NODEV 0x4
#define SY_MOUNT_ATTR_RDONLY 0x1
#define SY_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define SY_MOVE_MOUNT_T_SYMLINKS 0x10
#define SY_OPEN_TREE_CLONE 0x1
#define SY_AT_RECURSIVE 0x8000
/** The most write paths of one call that get their own writable mount (else the call does not start). */
#define MAX_WRITABLE 64

struct sy_mount_attr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/** mount_setattr of `path` (relative to `dir`; "" with AT_EMPTY_PATH: `dir` itself) and all beneath it. */
static int set_attributes(int dir, const char *path, unsigned flags, uint64_t set) {
  struct sy_mount_attr attr = { set, 0, 0, 0 };
  return (int)syscall(SYS_mount_setattr, dir, path, flags | SY_AT_RECURSIVE, &attr, sizeof attr);
}
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
    if (make_tmpfs(1 << 20) < 0) _exit(2);
    int tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/", SY_OPEN_TREE_CLONE | O_CLOEXEC);
    _exit(tree < 0 || set_attributes(AT_FDCWD, "/", 0, SY_MOUNT_ATTR_RDONLY | SY_MOUNT_ATTR_NOSUID) != 0 ? 3 : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(why, size, "%s",
             child < 0 ? "cannot fork to try" :
             WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "cannot create IPC and mount namespaces" :
             WIFEXITED(status) && WEXITSTATUS(status) == 2 ? "cannot create a tmpfs with fsopen (kernel before 5.2?)" :
                                                             "cannot make the mount tree read-only with mount_setattr (kernel before 5.12?)");
    return 0;
  }
  return 1;
}

int isolation_prepare(const struct spawn_request *req, struct isolation *iso) {
  iso->tmpfs = -1;
  iso->parent[0] = 0;
  if (!req->tmp) return 0;
  // A TMPDIR without a budget would be the scratch directory's disk while the host says one holds.
  if (!req->limits.disk) {
    errno = EINVAL;
    return -1;
  }
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

/**
 * Everything read-only and nosuid but the call's write paths: Landlock (ABI 7) does not govern
 * chmod, chown, utimes or extended attributes, and a plugin running as root owns every root-owned
 * file of the host. Each write path is cloned first (with what is mounted beneath it, as the host
 * has it: a path the host mounted read-only stays so) and put back on itself once the rest is
 * read-only; its Landlock rule still holds there, on the same directory. Device nodes, pipes and
 * sockets are written on a read-only mount all the same: they keep none (a writable /dev/null could
 * be chmod-ed). The scratch directory stays read-only: the call's tmpfs goes beneath it.
 */
static int read_only_but_writes(const struct spawn_request *req, const struct isolation *iso) {
  int clones[MAX_WRITABLE];
  const char *targets[MAX_WRITABLE];
  int count = 0, failed = 0;
  for (const char **path = req->write_paths; path && *path && !failed; path++) {
    struct stat st;
    if ((iso->tmpfs >= 0 && strcmp(*path, iso->parent) == 0) || (stat(*path, &st) == 0 && !S_ISREG(st.st_mode) &&
                                                                 !S_ISDIR(st.st_mode)))
      continue;
    if (count == MAX_WRITABLE) {
      errno = E2BIG;
      failed = 1;
      break;
    }
    int tree = (int)syscall(SYS_open_tree, AT_FDCWD, *path, SY_OPEN_TREE_CLONE | SY_AT_RECURSIVE | O_CLOEXEC);
    // A write path that does not exist on this host (an admin's list for several hosts) gives nothing
    // to write, as its Landlock rule does: skipped, and nothing can make it under a read-only parent.
    if (tree < 0 && (errno == ENOENT || errno == ENOTDIR)) continue;
    if (tree < 0 || set_attributes(tree, "", AT_EMPTY_PATH, SY_MOUNT_ATTR_NOSUID) != 0) {
      if (tree >= 0) close(tree);
      failed = 1;
      break;
    }
    clones[count] = tree;
    targets[count++] = *path;
  }
  if (!failed && set_attributes(AT_FDCWD, "/", 0, SY_MOUNT_ATTR_RDONLY | SY_MOUNT_ATTR_NOSUID) != 0) failed = 1;
  // By path, each after the one before: a write path beneath another goes on that one's new mount.
  for (int i = 0; i < count; i++) {
    if (!failed && syscall(SYS_move_mount, clones[i], "", AT_FDCWD, targets[i],
                           SY_MOVE_MOUNT_F_EMPTY_PATH | SY_MOVE_MOUNT_T_SYMLINKS) != 0)
      failed = 1;
    int error = errno;
    close(clones[i]);
    errno = error;
  }
  return failed ? -1 : 0;
}

int isolation_enter(const struct spawn_request *req, const struct isolation *iso) {
  // Private: no mount of the call reaches the host's namespace (nor one of the host the call).
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
  if ((req->flags & SPAWN_FILES) && read_only_but_writes(req, iso) != 0) return -1;
  if (iso->tmpfs < 0) return 0;
  // Read-only already, unless a write path above it (an admin's --allow-write /tmp) made it writable
  // again: bound read-only over itself, so nothing but the tmpfs is writable beneath it either way.
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
