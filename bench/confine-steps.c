// The kernel side of per-call confinement, step by step (bench/confine-steps.mjs
// builds and runs it): each variant forks a child that applies one step (as the
// keeper's child does before its exec: native/keeper.c start_plugin) and exits;
// CPU per fork of the child and this process (getrusage), against fork only.
// Needs root for the cgroup step (it makes two v1 cgroups, removed at the end).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include "confine.h"
struct ra { uint64_t fs, net, scoped; };
struct pb { uint64_t a; int32_t fd; } __attribute__((packed));
static double cpu_children(){struct rusage r;getrusage(RUSAGE_CHILDREN,&r);return (r.ru_utime.tv_sec+r.ru_stime.tv_sec)*1e6+r.ru_utime.tv_usec+r.ru_stime.tv_usec;}
static double cpu_self(){struct rusage r;getrusage(RUSAGE_SELF,&r);return (r.ru_utime.tv_sec+r.ru_stime.tv_sec)*1e6+r.ru_utime.tv_usec+r.ru_stime.tv_usec;}
int main(int argc,char**argv){
  int n=argc>1?atoi(argv[1]):4000;
  const char *paths[]={"/usr","/bin","/sbin","/lib","/lib64","/opt","/sys/devices/system/cpu","/sys/fs/cgroup","/dev/urandom","/dev/random","/dev/zero","/dev/fd","/etc/ld.so.cache","/etc/ld.so.conf","/etc/ld.so.conf.d","/etc/alternatives","/etc/localtime","/etc/ssl","/etc/nsswitch.conf","/etc/passwd","/etc/group","/etc/hosts","/etc/host.conf","/etc/resolv.conf","/etc/gai.conf","/etc/services","/etc/protocols","/etc/os-release","/etc/debian_version","/tmp",0};
  struct ra attr={(1ull<<16)-1,3,3};
  int rs=syscall(444,&attr,sizeof attr,0);
  for(const char**p=paths;*p;p++){int fd=open(*p,O_PATH|O_CLOEXEC); if(fd<0)continue; struct stat st; fstat(fd,&st); struct pb r={S_ISDIR(st.st_mode)? 7 : 7, fd}; if(syscall(445,rs,1,&r,0)) perror(*p); close(fd);}
  mkdir("/sys/fs/cgroup/pids/kb",0755); mkdir("/sys/fs/cgroup/memory/kb",0755);
  int pp=open("/sys/fs/cgroup/pids/kb/tasks",O_WRONLY|O_CLOEXEC), mp=open("/sys/fs/cgroup/memory/kb/tasks",O_WRONLY|O_CLOEXEC);
  int modes[]={0,16,1|16,2|16,4,8,1|2|4|8|16};
  const char*names[]={"fork only","nnp+dumpable","+seccomp","+landlock restrict","rlimits x4","cgroup join x2","all"};
  double tot[7]={0},wall[7]={0};
  for(int round=0;round<20;round++) for(int m=0;m<7;m++){
    double c0=cpu_children()+cpu_self(); struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
    for(int i=0;i<n/20;i++){ pid_t c=fork(); if(!c){int mode=modes[m];
      if(mode&16){prctl(PR_SET_NO_NEW_PRIVS,1,0,0,0);prctl(PR_SET_DUMPABLE,0,0,0,0);}
      if(mode&1) if(install_seccomp(1)) _exit(3);
      if(mode&2) if(syscall(446,rs,0)) _exit(4);
      if(mode&4){struct rlimit l={60,61};setrlimit(RLIMIT_CPU,&l);struct rlimit f={1<<30,1<<30};setrlimit(RLIMIT_FSIZE,&f);struct rlimit o={256,256};setrlimit(RLIMIT_NOFILE,&o);setrlimit(RLIMIT_CPU,&l);}
      if(mode&8){write(pp,"0",1);write(mp,"0",1);}
      _exit(0);} int st; waitpid(c,&st,0); if(st) {printf("child failed %d\n",st);return 1;} }
    clock_gettime(CLOCK_MONOTONIC,&b);
    tot[m]+=cpu_children()+cpu_self()-c0; wall[m]+=(b.tv_sec-a.tv_sec)*1e6+(b.tv_nsec-a.tv_nsec)/1e3;
  }
  for(int m=0;m<7;m++) printf("%-22s cpu %7.1f us  wall %7.1f us (delta cpu %+6.1f)\n",names[m],tot[m]/n,wall[m]/n,(tot[m]-tot[0])/n);
  rmdir("/sys/fs/cgroup/pids/kb"); rmdir("/sys/fs/cgroup/memory/kb");
}
