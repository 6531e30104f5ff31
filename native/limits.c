// Resource limits of a plugin call (limits.h). rlimits for CPU time, file
// size and open files; memory and processes through a pool of cgroups this
// helper keeps: <our cgroup>/sy-<helper pid>/<slot> in the pids and memory
// hierarchies (cgroup v1 controllers, or the unified v2 hierarchy where it
// lists them and we may enable them below us). A slot is the call's index in
// the helper's call table, free again only once nothing of its call runs
// (spawner.c finish_if_done), so a slot's counters belong to one call at a
// time. Where no cgroup can be made (not root, nothing delegated) memory falls
// back to RLIMIT_AS and processes are not limited; the probe says why.
#define _GNU_SOURCE
#include "limits.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { PIDS = 0, MEMORY = 1, CONTROLLERS = 2 };
static const char *const controller_names[CONTROLLERS] = { "pids", "memory" };

/** One controller's hierarchy: where our cgroup is, and this helper's pool in it. */
struct hierarchy {
  int version;           // 1 or 2; 0 when the controller cannot be used (why says so)
  char dir[PATH_MAX];    // our own cgroup in this hierarchy
  char pool[PATH_MAX];   // dir/sy-<pid>, made by limits_init
  int shared;            // v2: the same pool as the other controller (made and removed once)
  int pool_made;
  int memsw;             // v1 memory: memory.memsw.limit_in_bytes exists (swap accounting on)
  char why[PATH_MAX + 256];
};
static struct hierarchy cg[CONTROLLERS];
static int initialized;
/** The helper whose pool this is (its pid names the pool); a keeper whose parent it no longer is outlived it. */
static pid_t pool_owner;

/**
 * What each slot's cgroups carry now, so a limit is written only when it changes; and its files a call
 * uses, opened once (kernfs opens cost ~10 us each), with the counters read before the call.
 * `baseline_known`: the counters in `files` are what the slot's last call left (limits_end read them once
 * nothing of it ran) and nothing ran in the slot since, so the next call need not read them again.
 */
struct slot_state {
  unsigned char made, processes_known, memory_known, files_open, baseline_known;
  unsigned long long processes, memory;
  struct limit_watch files;
};
static struct slot_state *slots;
static size_t slot_count;

// ---- small file helpers ---------------------------------------------------------

static ssize_t read_text(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n, total = 0;
  while ((size_t)total < size - 1 && (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0) total += n;
  close(fd);
  buf[total] = 0;
  return total;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n;
  do n = write(fd, text, len); while (n < 0 && errno == EINTR);
  int error = errno;
  close(fd);
  if (n == (ssize_t)len) return 0;
  errno = n < 0 ? error : EIO;
  return -1;
}

/** `dir/name` into out (PATH_MAX); -1 (ENAMETOOLONG) when it does not fit. */
static int join(char *out, const char *dir, const char *name) {
  int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
  if (n < 0 || n >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/** Does the whitespace- or comma-separated list hold this word? */
static int has_word(const char *list, const char *word, const char *separators) {
  size_t len = strlen(word);
  for (const char *at = list; *at;) {
    size_t span = strcspn(at, separators);
    if (span == len && strncmp(at, word, len) == 0) return 1;
    at += span;
    at += strspn(at, separators);
  }
  return 0;
}

/** The number after `key ` at the start of a line of a counter file (pids.events, memory.events, oom_control). */
static unsigned long long counter_in(const char *text, const char *key) {
  size_t len = strlen(key);
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp(line, key, len) == 0 && line[len] == ' ') return strtoull(line + len + 1, NULL, 10);
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s) {
  char *out = s;
  for (char *in = s; *in;) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
        in[3] <= '7') {
      *out++ = (char)(((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
      in += 4;
    } else {
      *out++ = *in++;
    }
  }
  *out = 0;
}

// ---- emptying and removing cgroups ---------------------------------------------

/** SIGKILLs every process in a cgroup (cgroup.kill on v2 where there is one); how many it found. */
static int kill_members(const char *cgroup) {
  char path[PATH_MAX];
  if (join(path, cgroup, "cgroup.kill") == 0 && write_text(path, "1") == 0) return 1;
  if (join(path, cgroup, "cgroup.procs") != 0) return 0;
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  int pid, found = 0;
  while (fscanf(f, "%d", &pid) == 1)
    if (pid > 0 && pid != getpid()) kill(pid, SIGKILL), found++;
  fclose(f);
  return found;
}

/** rmdir a slot cgroup; one still holding processes (a dead helper's) has them killed first. */
static int remove_cgroup(const char *cgroup) {
  for (int attempt = 0; attempt < 50; attempt++) {
    if (rmdir(cgroup) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY) return -1;
    kill_members(cgroup);
    sleep_ms(attempt < 10 ? 2 : 10);
  }
  errno = EBUSY;
  return -1;
}

/** A pool and its slots (every subdirectory). */
static void remove_pool(const char *pool) {
  DIR *dir = opendir(pool);
  if (dir) {
    struct dirent *entry;
    char path[PATH_MAX];
    while ((entry = readdir(dir)))
      if (entry->d_name[0] != '.' && entry->d_type == DT_DIR && join(path, pool, entry->d_name) == 0)
        remove_cgroup(path);
    closedir(dir);
  }
  remove_cgroup(pool);
}

/**
 * When a process started, in seconds since the epoch (boot time + its start in clock ticks); -1 unknown, -2
 * when it is dead (a zombie not reaped yet).
 */
static double started_at(long pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if (read_text(path, text, sizeof text) <= 0) return errno == ENOENT ? -2 : -1;
  char *paren = strrchr(text, ')');
  unsigned long long ticks;
  if (paren && (paren[2] == 'Z' || paren[2] == 'X')) return -2;
  // After ") ": state, then fields 4..21; starttime is field 22.
  if (!paren || sscanf(paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                       &ticks) != 1)
    return -1;
  static unsigned long long boot; // seconds since the epoch, from /proc/stat's btime line
  if (!boot) {
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    while (f && !boot && fgets(line, sizeof line, f))
      if (strncmp(line, "btime ", 6) == 0) boot = strtoull(line + 6, NULL, 10);
    if (f) fclose(f);
  }
  long hz = sysconf(_SC_CLK_TCK);
  if (!boot || hz <= 0) return -1;
  return (double)boot + (double)ticks / (double)hz;
}

/**
 * Is the helper that made this pool alive? Its pid names the pool; a process with that pid that started after
 * the pool was made (a pid used again) is not it. Whatever its program is called (a helper of another build).
 */
static int owner_alive(long pid, const char *pool) {
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
  struct stat st;
  double started = started_at(pid);
  if (started == -2) return 0;
  if (started < 0 || stat(pool, &st) != 0) return 1;
  // btime is whole seconds: a second of slack, the other way (alive when unsure).
  return started <= (double)st.st_ctim.tv_sec + 2;
}

/** Pools of helpers that are gone (killed with -9, or died before their cleanup), with what still runs in them. */
static void remove_stale_pools(const char *cgroup_dir) {
  DIR *dir = opendir(cgroup_dir);
  if (!dir) return;
  struct dirent *entry;
  char path[PATH_MAX];
  while ((entry = readdir(dir))) {
    if (strncmp(entry->d_name, "sy-", 3) != 0 || entry->d_type != DT_DIR) continue;
    char *end;
    long pid = strtol(entry->d_name + 3, &end, 10);
    if (*end || pid <= 0 || end == entry->d_name + 3 || join(path, cgroup_dir, entry->d_name) != 0) continue;
    // One named with our pid is an earlier process's: ours is not made yet.
    if (pid == (long)getpid() || !owner_alive(pid, path)) remove_pool(path);
  }
  closedir(dir);
}

// ---- finding the hierarchies ----------------------------------------------------

/** Our cgroup per controller (/proc/self/cgroup): v1 paths by controller, the v2 path. */
struct membership {
  char v1[CONTROLLERS][PATH_MAX];
  int in_v1[CONTROLLERS];
  char v2[PATH_MAX];
  int in_v2;
};

static void read_membership(struct membership *m) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return;
  char line[PATH_MAX + 256];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *first = strchr(line, ':');
    char *second = first ? strchr(first + 1, ':') : NULL;
    if (!second) continue;
    *second = 0;
    const char *controllers = first + 1, *path = second + 1;
    if (strcmp(line, "0") == 0 && *controllers == 0) {
      snprintf(m->v2, sizeof m->v2, "%s", path);
      m->in_v2 = 1;
      continue;
    }
    for (int c = 0; c < CONTROLLERS; c++)
      if (has_word(controllers, controller_names[c], ",")) {
        snprintf(m->v1[c], sizeof m->v1[c], "%s", path);
        m->in_v1[c] = 1;
      }
  }
  fclose(f);
}

/** Mount point + our path below the mount's root; 0 when that directory exists. */
static int locate(char *out, const char *mountpoint, const char *root, const char *path) {
  size_t root_len = strlen(root);
  const char *below = path;
  if (strcmp(root, "/") != 0 && strncmp(path, root, root_len) == 0 && (path[root_len] == '/' || !path[root_len]))
    below = path + root_len;
  int n = snprintf(out, PATH_MAX, "%s%s%s", mountpoint, *below == '/' || !*below ? "" : "/", below);
  if (n < 0 || n >= PATH_MAX) return -1;
  size_t len = strlen(out);
  while (len > 1 && out[len - 1] == '/') out[--len] = 0;
  struct stat st;
  return stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/** From /proc/self/mountinfo: our cgroup directory per controller, v1 first (a controller bound there is not in v2). */
static void find_hierarchies(const struct membership *m) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) {
    for (int c = 0; c < CONTROLLERS; c++)
      snprintf(cg[c].why, sizeof cg[c].why, "cannot read /proc/self/mountinfo: %s", strerror(errno));
    return;
  }
  char line[3 * PATH_MAX];
  char v2_dir[PATH_MAX] = "";
  while (fgets(line, sizeof line, f)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    char *fields[6] = { 0 }, *save = NULL, *token = strtok_r(line, " \n", &save);
    int count = 0;
    while (token && count < 6) fields[count++] = token, token = strtok_r(NULL, " \n", &save);
    while (token && strcmp(token, "-") != 0) token = strtok_r(NULL, " \n", &save);
    if (count < 5 || !token) continue;
    char *fstype = strtok_r(NULL, " \n", &save), *source = strtok_r(NULL, " \n", &save),
         *options = strtok_r(NULL, " \n", &save);
    (void)source;
    if (!fstype) continue;
    char *root = fields[3], *mountpoint = fields[4];
    unescape(root);
    unescape(mountpoint);
    if (strcmp(fstype, "cgroup") == 0 && options) {
      for (int c = 0; c < CONTROLLERS; c++)
        if (!cg[c].version && m->in_v1[c] && has_word(options, controller_names[c], ",") &&
            locate(cg[c].dir, mountpoint, root, m->v1[c]) == 0)
          cg[c].version = 1;
    } else if (strcmp(fstype, "cgroup2") == 0 && m->in_v2 && !*v2_dir) {
      if (locate(v2_dir, mountpoint, root, m->v2) != 0) *v2_dir = 0;
    }
  }
  fclose(f);
  for (int c = 0; c < CONTROLLERS; c++) {
    if (cg[c].version) continue;
    if (m->in_v1[c]) {
      snprintf(cg[c].why, sizeof cg[c].why, "the %s hierarchy of /proc/self/cgroup is not mounted here",
               controller_names[c]);
      continue;
    }
    if (!*v2_dir) {
      snprintf(cg[c].why, sizeof cg[c].why, "no %s controller (no v1 hierarchy, no cgroup2 mount)",
               controller_names[c]);
      continue;
    }
    char path[PATH_MAX], text[512];
    if (join(path, v2_dir, "cgroup.controllers") != 0 || read_text(path, text, sizeof text) < 0 ||
        !has_word(text, controller_names[c], " \n")) {
      snprintf(cg[c].why, sizeof cg[c].why, "the %s controller is not available to %s (cgroup.controllers)",
               controller_names[c], v2_dir);
      continue;
    }
    snprintf(cg[c].dir, sizeof cg[c].dir, "%s", v2_dir);
    cg[c].version = 2;
  }
}

static void unusable(int c, const char *what, const char *path, int error) {
  snprintf(cg[c].why, sizeof cg[c].why, "%s %s: %s", what, path, strerror(error));
  cg[c].version = 0;
}

/** v2: our cgroup hands the controller down (one with processes of its own cannot, unless it is the root). */
static void enable_below_us(int c) {
  char path[PATH_MAX], text[512], enable[16];
  snprintf(enable, sizeof enable, "+%s", controller_names[c]);
  if (join(path, cg[c].dir, "cgroup.subtree_control") != 0) return unusable(c, "path too long:", cg[c].dir, errno);
  if ((read_text(path, text, sizeof text) < 0 || !has_word(text, controller_names[c], " \n")) &&
      write_text(path, enable) != 0)
    unusable(c, "cannot enable it in", path, errno);
}

/** This helper's pool in one hierarchy, its limit file writable and (v2) the controller on for its slots. */
static int make_pool(int c) {
  struct hierarchy *h = &cg[c];
  char path[PATH_MAX], enable[16];
  const char *what = "cannot create";
  snprintf(path, sizeof path, "%s", h->pool);
  if (!h->shared && mkdir(h->pool, 0755) != 0 && errno != EEXIST) goto failed;
  if (h->version == 2) {
    snprintf(enable, sizeof enable, "+%s", controller_names[c]);
    what = "cannot enable it in";
    if (join(path, h->pool, "cgroup.subtree_control") != 0 || write_text(path, enable) != 0) goto failed;
  }
  what = "cannot write";
  if (join(path, h->pool, c == PIDS ? "pids.max" : h->version == 1 ? "memory.limit_in_bytes" : "memory.max") != 0 ||
      access(path, W_OK) != 0)
    goto failed;
  if (c == MEMORY && h->version == 1) {
    h->memsw = join(path, h->pool, "memory.memsw.limit_in_bytes") == 0 && access(path, W_OK) == 0;
  }
  h->pool_made = 1;
  return 0;
failed:;
  int error = errno;
  if (!h->shared) rmdir(h->pool);
  snprintf(h->why, sizeof h->why, "%s %s: %s", what, path, strerror(error));
  errno = error;
  return -1;
}

/** Every pool made now, for the first call with limits (a helper that runs none leaves nothing behind). */
static int make_pools(void) {
  for (int c = 0; c < CONTROLLERS; c++)
    if (cg[c].version && !cg[c].pool_made && make_pool(c) != 0) return -1;
  return 0;
}

void limits_init(void) {
  if (initialized) return;
  initialized = 1;
  pool_owner = getpid();
  struct membership m;
  read_membership(&m);
  find_hierarchies(&m);
  for (int c = 0; c < CONTROLLERS; c++) {
    if (!cg[c].version) continue;
    // v2: one hierarchy for both controllers, its stale pools removed once.
    if (!(c == MEMORY && cg[PIDS].version && strcmp(cg[PIDS].dir, cg[c].dir) == 0)) remove_stale_pools(cg[c].dir);
    if (cg[c].version == 2) enable_below_us(c);
    if (!cg[c].version) continue;
    int n = snprintf(cg[c].pool, sizeof cg[c].pool, "%s/sy-%d", cg[c].dir, (int)pool_owner);
    if (n < 0 || n >= (int)sizeof cg[c].pool) {
      unusable(c, "path too long:", cg[c].dir, ENAMETOOLONG);
      continue;
    }
    cg[c].shared = c == MEMORY && cg[PIDS].version == 2 && strcmp(cg[PIDS].pool, cg[c].pool) == 0;
    // Can we? The pool made once and removed; made again at the first call with limits.
    if (make_pool(c) != 0) cg[c].version = 0;
  }
  for (int c = CONTROLLERS - 1; c >= 0; c--) {
    if (cg[c].pool_made && !cg[c].shared) rmdir(cg[c].pool);
    cg[c].pool_made = 0;
  }
}

unsigned limits_available(void) {
  return LIMIT_CPU | LIMIT_FILE_SIZE | (cg[MEMORY].version ? LIMIT_MEMORY : 0u) |
         (cg[PIDS].version ? LIMIT_PROCESSES : 0u);
}

void limits_print_probe(void) {
  // One word after each mechanism (src/core/supervision/containment.ts reads `^limits-memory (\S+)$`);
  // where the cgroup and why not on lines of their own.
  printf("limits-memory %s\n", cg[MEMORY].version == 1 ? "cgroup-v1" : cg[MEMORY].version == 2 ? "cgroup-v2" : "rlimit-as");
  printf("limits-processes %s\n", cg[PIDS].version == 1 ? "cgroup-v1" : cg[PIDS].version == 2 ? "cgroup-v2" : "none");
  for (int c = 0; c < CONTROLLERS; c++) {
    if (cg[c].version) printf("limits-cgroup-%s %s\n", controller_names[c], cg[c].dir);
    else printf("limits-cgroup-%s unavailable: %s\n", controller_names[c], cg[c].why);
  }
}

// ---- slots ----------------------------------------------------------------------

/** The slot's directory in one hierarchy. */
static int slot_path(char *out, int c, unsigned slot, const char *file) {
  int n = file ? snprintf(out, PATH_MAX, "%s/%u/%s", cg[c].pool, slot, file)
               : snprintf(out, PATH_MAX, "%s/%u", cg[c].pool, slot);
  if (n < 0 || n >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

static int write_slot(int c, unsigned slot, const char *file, const char *value) {
  char path[PATH_MAX];
  if (slot_path(path, c, slot, file) != 0) return -1;
  return write_text(path, value);
}

/** A slot's cgroups, made once: v1 memory with its OOM killer on; v2 memory without swap, killed whole on OOM. */
static int make_slot(unsigned slot) {
  char path[PATH_MAX];
  for (int c = 0; c < CONTROLLERS; c++) {
    if (!cg[c].version || cg[c].shared) continue;
    if (slot_path(path, c, slot, NULL) != 0) return -1;
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
  }
  if (cg[MEMORY].version == 1 && write_slot(MEMORY, slot, "memory.oom_control", "0") != 0) return -1;
  if (cg[MEMORY].version == 2) {
    if (write_slot(MEMORY, slot, "memory.swap.max", "0") != 0 && errno != ENOENT) return -1;
    if (write_slot(MEMORY, slot, "memory.oom.group", "1") != 0 && errno != ENOENT) return -1;
  }
  return 0;
}

/** v1: memory.limit_in_bytes is never above memory.memsw.limit_in_bytes, so the order of the two writes depends. */
static int set_memory_v1(unsigned slot, const char *value) {
  int set = write_slot(MEMORY, slot, "memory.limit_in_bytes", value);
  if (set != 0 && errno == EBUSY) {
    // Below what the slot still holds (page cache of an earlier call): give that back, then again.
    write_slot(MEMORY, slot, "memory.force_empty", "0");
    set = write_slot(MEMORY, slot, "memory.limit_in_bytes", value);
  }
  if (!cg[MEMORY].memsw) return set;
  if (set == 0) return write_slot(MEMORY, slot, "memory.memsw.limit_in_bytes", value); // lowered: memsw second
  if (errno != EINVAL) return -1;
  // Raised above memsw: memsw first.
  if (write_slot(MEMORY, slot, "memory.memsw.limit_in_bytes", value) != 0) return -1;
  return write_slot(MEMORY, slot, "memory.limit_in_bytes", value);
}

static int open_slot(int c, unsigned slot, const char *file, int flags) {
  char path[PATH_MAX];
  if (slot_path(path, c, slot, file) != 0) return -1;
  return open(path, flags | O_CLOEXEC);
}

static void close_files(struct limit_watch *files) {
  int *fds[] = { &files->memory_procs, &files->pids_procs, &files->memory_events, &files->pids_events };
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (*fds[i] >= 0) close(*fds[i]), *fds[i] = -1;
}

/** Every slot's files closed and its state forgotten (its cgroups are made and written anew). */
static void forget_slots(void) {
  for (size_t i = 0; i < slot_count; i++)
    if (slots[i].files_open) close_files(&slots[i].files);
  memset(slots, 0, slot_count * sizeof *slots);
}

/**
 * The file the plugin's process writes "0" to, to join a slot: v1 `tasks` (this
 * thread), not `cgroup.procs` (its thread group). For a process of one thread,
 * as the plugin's is before its exec (clone without CLONE_THREAD), the same
 * move; but only a whole thread group's takes the kernel's global
 * cgroup_threadgroup_rwsem for writing, whose percpu_down_write waits a
 * synchronize_rcu() once the lock has gone idle (ms, in ~1 call of 70 here).
 * v2 has no such file for a domain cgroup (cgroup.threads is for threaded ones).
 */
static const char *join_file(int c) { return cg[c].version == 1 ? "tasks" : "cgroup.procs"; }

/**
 * The slot's join files and counter files, opened by the helper once and kept
 * (close-on-exec; a keeper keeps its own slot's, the plugin's process writes
 * to them before its exec).
 */
static int open_files(unsigned slot, struct limit_watch *files) {
  *files = (struct limit_watch){ -1, -1, -1, -1, 0, 0 };
  if (cg[PIDS].version) {
    files->pids_procs = open_slot(PIDS, slot, join_file(PIDS), O_WRONLY);
    files->pids_events = files->pids_procs < 0 ? -1 : open_slot(PIDS, slot, "pids.events", O_RDONLY);
    if (files->pids_events < 0) goto failed;
  }
  if (cg[MEMORY].version) {
    // v2: one cgroup.procs for both controllers.
    if (!cg[MEMORY].shared) {
      files->memory_procs = open_slot(MEMORY, slot, join_file(MEMORY), O_WRONLY);
      if (files->memory_procs < 0) goto failed;
    }
    files->memory_events =
        open_slot(MEMORY, slot, cg[MEMORY].version == 1 ? "memory.oom_control" : "memory.events", O_RDONLY);
    if (files->memory_events < 0) goto failed;
  }
  return 0;
failed:;
  int error = errno;
  close_files(files);
  errno = error;
  return -1;
}

/** The counter from an open counter file into *value; -1 when the file cannot be read (its cgroup removed). */
static int read_counter(int fd, const char *key, unsigned long long *value) {
  char text[1024];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n < 0) return -1;
  text[n] = 0;
  *value = counter_in(text, key);
  return 0;
}

/** The slot's counters now, as the baseline of the call about to start. */
static int read_counters(struct limit_watch *files) {
  if (files->pids_events >= 0 && read_counter(files->pids_events, "max", &files->pids_max_hits) != 0) return -1;
  if (files->memory_events >= 0 && read_counter(files->memory_events, "oom_kill", &files->oom_kills) != 0) return -1;
  return 0;
}

static int prepare_slot(unsigned slot, const struct limits *limits) {
  if (make_pools() != 0) return -1;
  if (slot >= slot_count) {
    size_t count = (size_t)slot + 8;
    struct slot_state *grown = realloc(slots, count * sizeof *slots);
    if (!grown) return -1;
    memset(grown + slot_count, 0, (count - slot_count) * sizeof *grown);
    slots = grown;
    slot_count = count;
  }
  struct slot_state *s = &slots[slot];
  char value[32];
  if (!s->made) {
    if (make_slot(slot) != 0) return -1;
    s->made = 1;
  }
  // The counters before this call, through the slot's open files; a read that fails says the slot's
  // cgroup was removed (ENODEV), or its files could not be opened (ENOENT): the pool is made anew.
  if (!s->files_open) {
    if (open_files(slot, &s->files) != 0) return -1;
    s->files_open = 1;
  }
  // Two kernfs reads (a few us each) saved per call when the last call's end left the baseline.
  if (!s->baseline_known && read_counters(&s->files) != 0) {
    close_files(&s->files);
    s->files_open = 0;
    errno = ENOENT;
    return -1;
  }
  s->baseline_known = 0; // this call's own end reads them again
  if (cg[PIDS].version && (!s->processes_known || s->processes != limits->processes)) {
    s->processes_known = 0;
    if (limits->processes) snprintf(value, sizeof value, "%llu", limits->processes);
    else snprintf(value, sizeof value, "max");
    if (write_slot(PIDS, slot, "pids.max", value) != 0) return -1;
    s->processes = limits->processes;
    s->processes_known = 1;
  }
  if (cg[MEMORY].version && (!s->memory_known || s->memory != limits->memory)) {
    s->memory_known = 0;
    if (limits->memory) snprintf(value, sizeof value, "%llu", limits->memory);
    else snprintf(value, sizeof value, cg[MEMORY].version == 1 ? "-1" : "max");
    if ((cg[MEMORY].version == 1 ? set_memory_v1(slot, value) : write_slot(MEMORY, slot, "memory.max", value)) != 0)
      return -1;
    s->memory = limits->memory;
    s->memory_known = 1;
  }
  return 0;
}

int limits_prepare(unsigned slot, const struct limits *limits) {
  if (!cg[PIDS].version && !cg[MEMORY].version) return 0;
  if (prepare_slot(slot, limits) == 0) return 0;
  if (errno != ENOENT) return -1;
  // The pool was removed under us (by hand, or taken for a dead helper's): made again, every slot anew.
  for (int c = 0; c < CONTROLLERS; c++) cg[c].pool_made = 0;
  forget_slots();
  return prepare_slot(slot, limits);
}

// ---- the keeper and the plugin's process ---------------------------------------

int limits_watch(unsigned slot, const struct limits *limits, struct limit_watch *watch) {
  (void)limits;
  // The helper's files and counters of this slot (limits_prepare, just before the keeper's fork).
  *watch = (struct limit_watch){ -1, -1, -1, -1, 0, 0 };
  if (slot < slot_count && slots[slot].made && slots[slot].files_open) *watch = slots[slot].files;
  return 0;
}

static int set(int resource, unsigned long long soft, unsigned long long hard) {
  struct rlimit limit = { soft, hard };
  return setrlimit(resource, &limit);
}

static int join_cgroup(int procs) {
  if (procs < 0) return 0;
  // "0": the writer itself, in v1 and v2 alike (it leads its own thread group, of one thread: no CLONE_THREAD).
  ssize_t n;
  do n = write(procs, "0", 1); while (n < 0 && errno == EINTR);
  return n == 1 ? 0 : -1;
}

int limits_join(const struct limit_watch *watch) {
  return join_cgroup(watch->pids_procs) != 0 || join_cgroup(watch->memory_procs) != 0 ? -1 : 0;
}

int limits_apply(const struct limits *l, const struct limit_watch *watch, int joined) {
  // System calls only: this runs between the keeper's clone(CLONE_VM|CLONE_VFORK) and the exec.
  // Each call's own, in its own process: a serving keeper that carried them for its plugins to inherit
  // could not raise its hard limits again for a later call without CAP_SYS_RESOURCE.
  if (!joined && limits_join(watch) != 0) return -1;
  if (l->cpu_seconds && set(RLIMIT_CPU, l->cpu_seconds, l->cpu_seconds + 1)) return -1;
  if (l->file_size && set(RLIMIT_FSIZE, l->file_size, l->file_size)) return -1;
  if (l->open_files && set(RLIMIT_NOFILE, l->open_files, l->open_files)) return -1;
  // Address space only where no memory cgroup binds (it counts reservations, not memory used).
  if (l->memory && watch->memory_events < 0 && set(RLIMIT_AS, l->memory, l->memory)) return -1;
  return 0;
}

/**
 * In a keeper that outlived its helper (killed with -9: no limits_cleanup): the pool's empty slots, this one
 * among them, then the pool once it is empty (the last such keeper removes it; else the next helper's init).
 */
static void remove_orphaned_pool(void) {
  char path[PATH_MAX];
  for (int c = 0; c < CONTROLLERS; c++) {
    if (!cg[c].version || cg[c].shared || !cg[c].pool_made) continue;
    DIR *dir = opendir(cg[c].pool);
    if (!dir) continue;
    struct dirent *entry;
    while ((entry = readdir(dir)))
      if (entry->d_name[0] != '.' && entry->d_type == DT_DIR && join(path, cg[c].pool, entry->d_name) == 0)
        rmdir(path);
    closedir(dir);
    rmdir(cg[c].pool);
  }
}

void limits_keeper_end(void) {
  if (getppid() != pool_owner) remove_orphaned_pool();
}

unsigned limits_end(unsigned slot) {
  if (slot >= slot_count || !slots[slot].files_open) return 0;
  struct slot_state *s = &slots[slot];
  struct limit_watch *files = &s->files;
  unsigned hit = 0;
  unsigned long long pids_max_hits = files->pids_max_hits, oom_kills = files->oom_kills;
  // A counter that cannot be read (the slot's cgroup removed) leaves no baseline: the next call reads
  // them itself, and its failure there makes the pool anew.
  int read = (files->pids_events < 0 || read_counter(files->pids_events, "max", &pids_max_hits) == 0) &&
             (files->memory_events < 0 || read_counter(files->memory_events, "oom_kill", &oom_kills) == 0);
  if (pids_max_hits > files->pids_max_hits) hit |= LIMIT_PROCESSES;
  if (oom_kills > files->oom_kills) hit |= LIMIT_MEMORY;
  // Nothing of the call runs any more, and only its idle serving keeper stays in the slot's cgroups:
  // these counters are the next call's baseline (limits_prepare).
  files->pids_max_hits = pids_max_hits;
  files->oom_kills = oom_kills;
  s->baseline_known = (unsigned char)read;
  return hit;
}

void limits_forget_baseline(unsigned slot) {
  if (slot < slot_count) slots[slot].baseline_known = 0;
}

unsigned limits_of_status(int status) {
  if (!WIFSIGNALED(status)) return 0;
  if (WTERMSIG(status) == SIGXCPU) return LIMIT_CPU;
  if (WTERMSIG(status) == SIGXFSZ) return LIMIT_FILE_SIZE;
  return 0;
}

void limits_cleanup(void) {
  char path[PATH_MAX];
  for (int c = 0; c < CONTROLLERS; c++) {
    if (!cg[c].version || cg[c].shared || !cg[c].pool_made) continue;
    for (size_t slot = 0; slot < slot_count; slot++)
      if (slots[slot].made && slot_path(path, c, (unsigned)slot, NULL) == 0) remove_cgroup(path);
    remove_cgroup(cg[c].pool);
  }
  for (int c = 0; c < CONTROLLERS; c++) cg[c].pool_made = 0;
  forget_slots();
  free(slots);
  slots = NULL;
  slot_count = 0;
}
