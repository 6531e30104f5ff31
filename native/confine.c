// Kernel confinement of a plugin call (confine.h): Landlock (signal and
// abstract-socket scoping, file rules, TCP rules) and a seccomp filter. Raw
// system calls and our own definitions, since glibc has no Landlock wrappers
// and the build's headers may predate the running kernel.
#define _GNU_SOURCE
#include "confine.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define RULESET_VERSION (1u << 0)
#define RULE_PATH_BENEATH 1
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define SCOPE_SIGNAL (1ull << 1)
#define NET_BIND_TCP (1ull << 0)
#define NET_CONNECT_TCP (1ull << 1)

// Landlock file access rights, by the ABI that introduced them.
#define FS_EXECUTE (1ull << 0)
#define FS_WRITE_FILE (1ull << 1)
#define FS_READ_FILE (1ull << 2)
#define FS_READ_DIR (1ull << 3)
#define FS_MAKE_CHAR (1ull << 6)
#define FS_MAKE_BLOCK (1ull << 11)
#define FS_ABI1_ALL ((1ull << 13) - 1) // execute … make_sym
#define FS_REFER (1ull << 13)         // ABI 2
#define FS_TRUNCATE (1ull << 14)      // ABI 3
#define FS_IOCTL_DEV (1ull << 15)     // ABI 5
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

/** struct landlock_ruleset_attr as of ABI 6 (fs, net, scoped). */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi) {
  uint64_t all = FS_ABI1_ALL;
  if (abi >= 2) all |= FS_REFER;
  if (abi >= 3) all |= FS_TRUNCATE;
  if (abi >= 5) all |= FS_IOCTL_DEV;
  return all;
}

// ---- caches (helper only): an O_PATH descriptor per path, a ruleset per policy ----

#define CACHE_FRESH_NS (1000ll * 1000 * 1000)
#define MAX_PATHS 256
#define MAX_RULESETS 64

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

struct cached_path {
  char *path;
  int fd; // -1: the path does not exist (cached too)
  int is_dir;
  long long opened;
};
static struct cached_path paths[MAX_PATHS];
static size_t path_count, next_path_victim;

/** The path opened O_PATH (cached for CACHE_FRESH_NS); -1 when it does not exist or the cache cannot hold it. */
static int path_fd(const char *path, int *is_dir) {
  long long now = now_ns();
  struct cached_path *slot = NULL;
  for (size_t i = 0; i < path_count; i++)
    if (strcmp(paths[i].path, path) == 0) slot = &paths[i];
  if (slot && now - slot->opened < CACHE_FRESH_NS) {
    *is_dir = slot->is_dir;
    return slot->fd;
  }
  if (!slot) {
    if (path_count < MAX_PATHS) slot = &paths[path_count++];
    else slot = &paths[next_path_victim++ % MAX_PATHS];
    if (slot->path) free(slot->path), slot->path = NULL;
    if (slot->fd > 0) close(slot->fd);
    slot->fd = -1;
    slot->path = strdup(path);
    if (!slot->path) return -1;
  } else if (slot->fd >= 0) {
    close(slot->fd);
  }
  slot->fd = open(path, O_PATH | O_CLOEXEC);
  slot->is_dir = 0;
  struct stat st;
  if (slot->fd >= 0 && fstat(slot->fd, &st) == 0) slot->is_dir = S_ISDIR(st.st_mode);
  slot->opened = now;
  *is_dir = slot->is_dir;
  return slot->fd;
}

/** One path-beneath rule; a path that does not exist is skipped (a system directory this host lacks). */
static int add_path(int ruleset, const char *path, uint64_t access, int required) {
  int is_dir;
  int fd = path_fd(path, &is_dir);
  if (fd < 0) {
    errno = ENOENT;
    return required ? -1 : 0;
  }
  // A file takes only the rights that apply to a file (others are EINVAL).
  if (!is_dir) access &= FS_FILE_RIGHTS;
  struct path_beneath_attr rule = { access, fd };
  return syscall(SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &rule, 0) == 0 ? 0 : -1;
}

int call_ruleset(const struct spawn_request *req, int abi) {
  unsigned flags = req->flags;
  if (abi < 6) {
    errno = ENOSYS;
    return -1;
  }
  uint64_t fs = (flags & SPAWN_FILES) ? handled_fs(abi) : 0;
  struct ruleset_attr attr = {
    fs,
    (flags & SPAWN_NO_NETWORK) ? (NET_BIND_TCP | NET_CONNECT_TCP) : 0,
    SCOPE_SIGNAL | ((flags & SPAWN_NO_NETWORK) ? SCOPE_ABSTRACT_UNIX_SOCKET : 0),
  };
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0 || !(flags & SPAWN_FILES)) return ruleset;
  const uint64_t read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
  for (const char **path = req->read_paths; path && *path; path++)
    if (add_path(ruleset, *path, read, 0) != 0) goto failed;
  // Written paths (the scratch directory, the project in an operate call) must exist.
  // Writable is not a place for device nodes (a block device there would read the raw disk).
  for (const char **path = req->write_paths; path && *path; path++)
    if (add_path(ruleset, *path, fs & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK), 1) != 0) goto failed;
  return ruleset;
failed:;
  int error = errno;
  close(ruleset);
  errno = error;
  return -1;
}

struct cached_ruleset {
  char *key;
  size_t key_len;
  int fd;
  long long built;
};
static struct cached_ruleset rulesets[MAX_RULESETS];
static size_t next_ruleset_victim;

/** The request's flags and paths, as one byte string (NUL-separated, 0x01 between reads and writes). */
static char *ruleset_key(const struct spawn_request *req, size_t *len) {
  size_t size = 8;
  for (const char **path = req->read_paths; path && *path; path++) size += strlen(*path) + 1;
  for (const char **path = req->write_paths; path && *path; path++) size += strlen(*path) + 1;
  char *key = malloc(size + 2), *at = key;
  if (!key) return NULL;
  at += snprintf(at, 8, "%x", req->flags & (SPAWN_FILES | SPAWN_NO_NETWORK)) + 1;
  for (const char **path = req->read_paths; path && *path; path++) at = stpcpy(at, *path) + 1;
  *at++ = 1;
  for (const char **path = req->write_paths; path && *path; path++) at = stpcpy(at, *path) + 1;
  *len = (size_t)(at - key);
  return key;
}

static int landlock_abi_cached(void) {
  static int abi = -1;
  if (abi < 0) abi = landlock_abi();
  return abi;
}

int cached_ruleset(const struct spawn_request *req, int *error) {
  size_t len;
  char *key = ruleset_key(req, &len);
  if (!key) {
    *error = ENOMEM;
    return -1;
  }
  long long now = now_ns();
  struct cached_ruleset *slot = NULL;
  for (size_t i = 0; i < MAX_RULESETS; i++)
    if (rulesets[i].key && rulesets[i].key_len == len && memcmp(rulesets[i].key, key, len) == 0) slot = &rulesets[i];
  if (slot && now - slot->built < CACHE_FRESH_NS) {
    free(key);
    return slot->fd;
  }
  int fd = call_ruleset(req, landlock_abi_cached());
  if (fd < 0) {
    *error = errno;
    free(key);
    return -1;
  }
  if (!slot) slot = &rulesets[next_ruleset_victim++ % MAX_RULESETS];
  if (slot->key) {
    free(slot->key);
    close(slot->fd);
  }
  *slot = (struct cached_ruleset){ key, len, fd, now };
  return fd;
}

// ---- seccomp ----------------------------------------------------------------------

#if defined(__x86_64__)
#define SY_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SY_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define DENY(error) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (error))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(offset) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset))
/** The syscall `nr` jumps `skip` instructions ahead, any other falls through to the next test. */
#define IS(nr, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (skip), 0)
#ifndef SYS_clone3
#define SY_SYS_clone3 435
#else
#define SY_SYS_clone3 SYS_clone3
#endif
// CLONE_NEW* (<sched.h>), spelled out for older headers: CLONE_NEWTIME (0x80) is one for unshare only
// (in clone's flags that bit is part of the exit signal).
#define SY_CLONE_NEWNS 0x00020000u
#define SY_CLONE_NEWCGROUP 0x02000000u
#define SY_CLONE_NEWUTS 0x04000000u
#define SY_CLONE_NEWIPC 0x08000000u
#define SY_CLONE_NEWUSER 0x10000000u
#define SY_CLONE_NEWPID 0x20000000u
#define SY_CLONE_NEWNET 0x40000000u
#define SY_CLONE_NEWTIME 0x00000080u
#define CLONE_NAMESPACES (SY_CLONE_NEWCGROUP | SY_CLONE_NEWUTS | SY_CLONE_NEWUSER | SY_CLONE_NEWPID | SY_CLONE_NEWNET)
#define UNSHARE_NAMESPACES (CLONE_NAMESPACES | SY_CLONE_NEWNS | SY_CLONE_NEWIPC | SY_CLONE_NEWTIME)

int seccomp_available(void) {
#ifdef SY_AUDIT_ARCH
  return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
#else
  return 0;
#endif
}

int install_seccomp(int no_network) {
#ifndef SY_AUDIT_ARCH
  (void)no_network;
  errno = ENOSYS;
  return -1;
#else
  // Why each rule: socket() because Landlock (ABI 7) does not cover connecting
  // to a unix socket by path (the host's Redis) nor UDP — socketpair() stays,
  // a plugin's own children need it, but only of the connected types: a
  // datagram pair's end can sendto() any socket by path (/dev/log, a host
  // daemon's) as root; io_uring because its operations bypass this filter;
  // the scheduling and limit calls because Landlock's scoping does not cover
  // them and they would let a plugin slow or starve its keeper,
  // the helper or the worker (any pid but its own, 0). The keyring calls
  // because keys are per user, not per call: a call would read what the
  // worker's user (root) or an earlier call keeps there. No new namespace:
  // unshare(CLONE_NEWUSER) would give the plugin every capability in a user
  // namespace of its own (and with it mounts, new network stacks); setns
  // joins one; clone3 hides its flags in memory a filter cannot read, so it
  // is ENOSYS and libc falls back to clone, whose flags it can. clone may keep
  // CLONE_NEWNS and CLONE_NEWIPC: a keeper under the helper's filter starts
  // every isolated call with them (isolate.h), and they need CAP_SYS_ADMIN,
  // which a confined plugin never has.
  struct sock_filter filter[] = {
    LOAD(offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SY_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    LOAD(offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    // The x32 ABI's numbers would pass every test below.
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
    DENY(ENOSYS),
#endif
    /* 0 */ IS(SYS_socket, 17),
    /* 1 */ IS(SYS_io_uring_setup, 20),
    /* 2 */ IS(SYS_ioprio_set, 30),
    /* 3 */ IS(SYS_prlimit64, 19),
    /* 4 */ IS(SYS_sched_setaffinity, 18),
    /* 5 */ IS(SYS_sched_setscheduler, 17),
    /* 6 */ IS(SYS_sched_setparam, 16),
    /* 7 */ IS(SYS_sched_setattr, 15),
    /* 8 */ IS(SYS_setpriority, 16),
    /* 9 */ IS(SYS_add_key, 23),
    /* 10 */ IS(SYS_request_key, 22),
    /* 11 */ IS(SYS_keyctl, 21),
    /* 12 */ IS(SYS_setns, 20),
    /* 13 */ IS(SY_SYS_clone3, 8),
    /* 14 */ IS(SYS_unshare, 14),
    /* 15 */ IS(SYS_clone, 15),
    /* 16 */ IS(SYS_socketpair, 18),
    /* 17 */ ALLOW,
    // 18: socket(domain, …): never AF_UNIX (connect by path), nothing else without network
    /* 18 */ LOAD(ARG_LO(0)),
    /* 19 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
    /* 20 */ DENY(EACCES),
    /* 21 */ BPF_STMT(BPF_RET | BPF_K, no_network ? SECCOMP_RET_ERRNO | EACCES : SECCOMP_RET_ALLOW),
    // 22: io_uring_setup, clone3
    /* 22 */ DENY(ENOSYS),
    // 23: the pid as the first argument: only 0 (itself)
    /* 23 */ LOAD(ARG_LO(0)),
    /* 24 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 8),
    // 25: setpriority(which, who): only PRIO_PROCESS (0) of itself (0)
    /* 25 */ LOAD(ARG_LO(0)),
    /* 26 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 6),
    /* 27 */ LOAD(ARG_LO(1)),
    /* 28 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 4),
    // 29: unshare(flags): no namespace flag
    /* 29 */ LOAD(ARG_LO(0)),
    /* 30 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, UNSHARE_NAMESPACES, 2, 3),
    // 31: clone(flags, …): none of the namespaces that need no capability, nor those a keeper never asks
    /* 31 */ LOAD(ARG_LO(0)),
    /* 32 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NAMESPACES, 0, 1),
    /* 33 */ DENY(EPERM),
    /* 34 */ ALLOW,
    // 35: socketpair(domain, type, …): a stream or seqpacket pair only, whose ends are connected to
    // each other for good; a datagram end (SOCK_RAW is one for AF_UNIX) sends to any socket by path
    /* 35 */ LOAD(ARG_LO(1)),
    /* 36 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),
    /* 37 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 2, 0),
    /* 38 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, 1, 0),
    /* 39 */ DENY(EACCES),
    /* 40 */ ALLOW,
  };
  struct sock_fprog program = { (unsigned short)(sizeof filter / sizeof filter[0]), filter };
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
#endif
}

/**
 * No capability, now or after an exec, even as root: a root plugin with capabilities could load a
 * kernel module, make a device node and read the raw disk, or load BPF programs — none of which
 * Landlock or the seccomp filter covers. Securebits first (they need CAP_SETPCAP), then capset.
 * A process that has no capability (a worker not run as root) has nothing to drop.
 */
struct cap_header {
  uint32_t version;
  int pid;
};
struct cap_data {
  uint32_t effective, permitted, inheritable;
};
#define CAP_VERSION_3 0x20080522
// SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS_LOCKED, SECBIT_NO_CAP_AMBIENT_RAISE, each locked.
#define NO_ROOT_BITS (0x01ul | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80)

static int drop_capabilities(void) {
  struct cap_header header = { CAP_VERSION_3, 0 };
  struct cap_data data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  if (syscall(SYS_capget, &header, data) != 0) return -1;
  if (!(data[0].permitted | data[1].permitted)) return 0;
  // Without CAP_SETPCAP (a hardened container) the bits cannot be set: the capabilities are still
  // dropped, but an exec as root would get them back — `capabilities_droppable` says so to the host.
  if (prctl(PR_SET_SECUREBITS, NO_ROOT_BITS, 0, 0, 0) != 0 && errno != EPERM) return -1;
  memset(data, 0, sizeof data);
  return (int)syscall(SYS_capset, &header, data);
}

int capabilities_droppable(void) {
  struct cap_header header = { CAP_VERSION_3, 0 };
  struct cap_data data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  if (!(data[0].permitted | data[1].permitted)) return 1; // none to drop
  // CAP_SETPCAP (8) lets the keeper lock the securebits.
  return (data[0].permitted & (1u << 8)) != 0;
}

int confine_self(int ruleset, int seccomp, int no_network) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  // Not dumpable: another process of the same user cannot ptrace it or read its memory through /proc.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
  if (seccomp && install_seccomp(no_network) != 0) return -1;
  if (ruleset >= 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return -1;
  return drop_capabilities();
}

int confine_prepare_keeper(struct confine_base *base) {
  // What confine_self does per process that does not change from call to call, done once on the keeper
  // and inherited by each plugin's process: no_new_privs (the keeper never execs), the securebits
  // (they bind an exec and a setuid, neither of which the keeper does), whether there are capabilities
  // to drop. Its memory is already not dumpable (keeper_serve), and the plugin's process shares it
  // until its exec.
  *base = (struct confine_base){ 0, 0 };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  struct cap_header header = { CAP_VERSION_3, 0 };
  struct cap_data data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  if (syscall(SYS_capget, &header, data) != 0) return -1;
  base->capabilities = (data[0].permitted | data[1].permitted) != 0;
  if (base->capabilities && prctl(PR_SET_SECUREBITS, NO_ROOT_BITS, 0, 0, 0) != 0 && errno != EPERM) return -1;
  base->prepared = 1;
  return 0;
}

int confine_plugin(int ruleset, int seccomp, int no_network, const struct confine_base *base) {
  if (!base || !base->prepared) return confine_self(ruleset, seccomp, no_network);
  if (seccomp && install_seccomp(no_network) != 0) return -1;
  if (ruleset >= 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return -1;
  if (!base->capabilities) return 0;
  struct cap_header header = { CAP_VERSION_3, 0 };
  struct cap_data data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
  return (int)syscall(SYS_capset, &header, data);
}
