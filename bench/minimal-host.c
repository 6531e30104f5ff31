// The minimal-host baseline (docs/adr/0008-host-share-against-a-minimal-host.md): the cheapest way this machine can run
// one plugin call. `concurrency` threads each loop: posix_spawn the executable
// (glibc: clone(CLONE_VM|CLONE_VFORK), no page-table copy) in its package
// directory with the plugin environment, write `initialize` and
// `project.inspect` in one write, read until both answers arrived, close
// stdin, waitpid. stderr goes to /dev/null. No containment, no validation
// beyond "the second answer is a result". Built by bench/lib.mjs (for bench/batch-throughput.mjs).
//
//   minimal-host [--roots <dir>] <executable> <cwd> <calls> <concurrency> [NAME=value ...]
//
// With --roots, each project also gets "root":"<dir>/p<index>" and the grants
// add project.files.read (a plugin that reads project files,
// bench/plugins-as-written.mjs); without it the bytes are exactly the ones
// bench/lib.mjs minimalHostRequest and the shell peers mirror.
//
// Prints one JSON line: wall ms, calls, failures, and getrusage of this
// process (self) and of its reaped children (the plugins).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *executable, *cwd, *roots;
static char **environment;
static long total;
static atomic_long next_index, failures;
static int devnull;

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"switchyard.plugin/v1\",\"hostVersion\":\"minimal-host\",\"grantedScopes\":[\"project.metadata.read\"]}}\n";
static const char INIT_FILES[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"switchyard.plugin/v1\",\"hostVersion\":\"minimal-host\",\"grantedScopes\":[\"project.metadata.read\","
    "\"project.files.read\"]}}\n";

static int one_call(long index) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, devnull, 2);
  posix_spawn_file_actions_addchdir_np(&actions, cwd);
  char *argv[] = { (char *)executable, NULL };
  pid_t pid;
  int error = posix_spawn(&pid, executable, &actions, NULL, argv, environment);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (error) {
    close(in[1]);
    close(out[0]);
    return -1;
  }
  char request[8192];
  int length = roots
                   ? snprintf(request, sizeof request,
                              "%s{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"project.inspect\",\"params\":{\"project\":"
                              "{\"id\":\"p%06ld\",\"displayName\":\"p%06ld\",\"root\":\"%s/p%06ld\"}}}\n",
                              INIT_FILES, index, index, roots, index)
                   : snprintf(request, sizeof request,
                              "%s{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"project.inspect\",\"params\":{\"project\":"
                              "{\"id\":\"p%06ld\",\"displayName\":\"p%06ld\"}}}\n",
                              INIT, index, index);
  int ok = length > 0 && (size_t)length < sizeof request && write(in[1], request, (size_t)length) == length;
  char answer[65536];
  size_t have = 0;
  int newlines = 0;
  while (ok && newlines < 2 && have < sizeof answer) {
    ssize_t n = read(out[0], answer + have, sizeof answer - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; i++) newlines += answer[have + (size_t)i] == '\n';
    have += (size_t)n;
  }
  close(in[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(out[0]);
  if (newlines < 2) return -1;
  char *second = memchr(answer, '\n', have);
  answer[have < sizeof answer ? have : sizeof answer - 1] = 0;
  return second && strstr(second, "\"result\"") ? 0 : -1;
}

static void *runner(void *unused) {
  (void)unused;
  for (;;) {
    long index = atomic_fetch_add(&next_index, 1);
    if (index >= total) return NULL;
    if (one_call(index)) atomic_fetch_add(&failures, 1);
  }
}

static double ms(struct timeval t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--roots") == 0) {
    roots = argv[2];
    // The root goes into the JSON as is: refuse what would need escaping rather than escape it.
    for (const char *c = roots; *c; c++)
      if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) {
        fprintf(stderr, "minimal-host: --roots must need no JSON escaping\n");
        return 2;
      }
    argc -= 2;
    argv += 2;
  }
  if (argc < 5) {
    fprintf(stderr, "usage: minimal-host [--roots <dir>] <executable> <cwd> <calls> <concurrency> [NAME=value ...]\n");
    return 2;
  }
  executable = argv[1];
  cwd = argv[2];
  total = atol(argv[3]);
  int concurrency = atoi(argv[4]);
  environment = argv + 5; // argv is NULL-terminated
  devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  pthread_t threads[64];
  if (concurrency < 1 || concurrency > 64) return 2;
  for (int i = 0; i < concurrency; i++) pthread_create(&threads[i], NULL, runner, NULL);
  for (int i = 0; i < concurrency; i++) pthread_join(threads[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &end);
  struct rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  printf("{\"ms\":%.3f,\"calls\":%ld,\"failures\":%ld,\"selfUserMs\":%.3f,\"selfSysMs\":%.3f,"
         "\"childUserMs\":%.3f,\"childSysMs\":%.3f}\n",
         (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6, total,
         atomic_load(&failures), ms(self.ru_utime), ms(self.ru_stime), ms(children.ru_utime),
         ms(children.ru_stime));
  return 0;
}
