// fork-stress: the agent's lifecycle under fire, for the lifecycle stress test (and by hand).
//
//   fork-stress <run-ms> <capture-dir>
//
// Three threads fork in a loop (each child allocates, then ends by _exit, by exit, or by exec'ing /bin/true, in turn)
// and wait for their children; a fourth sends SIGUSR1 to the forking threads, whose handler allocates and frees when
// it lands in fork or waitpid (in fork's prepare and parent handlers, the agent's among them, with their locks held);
// with the agent tracking the heap a fifth captures it in a loop (into a file with no name in <capture-dir>); an
// atexit handler allocates. After
// <run-ms> (a little less or more at random) the main thread calls exit(0) while all of that goes on: the exit path
// meets forks in flight, captures and signals. It prints `pid N` first and `forks N captures N signals N
// handler_allocations N` before exiting.
//
// A run that hangs is the failure this program exists to show (the test's time limit catches it); a child that
// hangs is one too: the forking thread waits for it.
//
// The handlers allocate only what jemalloc's thread cache serves without a lock, by construction: jemalloc's prepare
// handler holds every arena's locks, and a handler whose block came from an arena there would wait for its own thread.
// So the cache is never collected (malloc_conf below), and its bin of 64-byte blocks is filled before each fork: the
// agent defers the release of a block a handler frees while the agent holds its own locks (its tables are mid-update),
// and that block reaches the cache only once the fork is over, so with one cached block a second signal in one fork
// found the bin empty (seen: 1 run in about 2,000, the forking thread waiting in jemalloc for an arena lock it held).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKERS 3
// 64-byte blocks cached before each fork: more than the signals that can land in one fork (one per 600 µs per
// thread), fewer than the bin holds (128 for this size class).
#define PRIMED 64

// jemalloc's options, read from this symbol: no incremental collection of the thread caches (it returns cached blocks
// to their arenas, under the arenas' locks, from any allocation, a handler's included).
const char *malloc_conf = "tcache_gc_incr_bytes:1073741824";

static _Atomic long forks, captures, signals, handler_allocations;
// Set while this thread is in fork or waitpid: a handler that interrupts it then is not inside malloc. (One that
// interrupted malloc itself and allocated would break any allocator: jemalloc alone crashes so.)
static __thread volatile sig_atomic_t in_fork_or_wait;
static pthread_t forkers[FORKERS];
static void *volatile sink;

static void sleep_us(long us) {
    struct timespec duration = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (nanosleep(&duration, &duration) == -1 && errno == EINTR) {
    }
}

// Allocates in a signal handler: not async-signal-safe by POSIX, done by real programs, and what the agent must
// survive wherever the signal lands (jemalloc's thread cache serves it without a lock almost always).
static void on_signal(int signal) {
    (void)signal;
    int saved = errno;
    if (in_fork_or_wait) {
        // 64 bytes, freed at once: the thread cache serves it without jemalloc's locks (which fork holds).
        char *block = malloc(64);
        if (block != NULL) block[0] = 1;
        sink = block;
        free(block);
        atomic_fetch_add(&handler_allocations, 1);
    }
    atomic_fetch_add(&signals, 1);
    errno = saved;
}

static void child(long round) {
    // The child allocates at once: a lock inherited held would hang it here.
    void *blocks[32];
    for (int i = 0; i < 32; i++) blocks[i] = malloc((size_t)(16 + i * 97));
    for (int i = 0; i < 32; i++) free(blocks[i]);
    switch (round % 3) {
    case 0: _exit(0);
    case 1: exit(0);
    default: execl("/bin/true", "true", (char *)NULL); _exit(0);
    }
}

static void *forker(void *argument) {
    (void)argument;
    free(malloc(64));  // the thread cache holds a 64-byte block before any handler asks for one (waitpid's too)
    for (long round = 0;; round++) {
        void *kept = malloc(256);
        sink = kept;
        void *primed[PRIMED];
        for (int i = 0; i < PRIMED; i++) sink = primed[i] = malloc(64);  // through sink: no pair the compiler drops
        for (int i = 0; i < PRIMED; i++) free(primed[i]);
        in_fork_or_wait = 1;
        pid_t pid = fork();
        if (pid == 0) {
            in_fork_or_wait = 0;
            child(round);
        }
        if (pid > 0) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
        }
        in_fork_or_wait = 0;
        if (pid > 0) atomic_fetch_add(&forks, 1);
        free(kept);
    }
    return NULL;
}

static void *signaller(void *argument) {
    (void)argument;
    for (unsigned i = 0;; i++) {
        pthread_kill(forkers[i % FORKERS], SIGUSR1);
        sleep_us(200);
    }
    return NULL;
}

typedef int (*capture_fd_fn)(int, const char *, uintptr_t);
typedef int (*capture_path_fn)(const char *, const char *);
static const char *capture_dir;

// Captures into a file with no name (the agent of this tree), or into a named file (an older agent has no
// descriptor capture), truncated after each.
static void *capturer(void *argument) {
    capture_fd_fn capture_fd = (capture_fd_fn)argument;
    capture_path_fn capture_path = (capture_path_fn)dlsym(RTLD_DEFAULT, "memharness_agent_capture_heap");
    char path[4096];
    snprintf(path, sizeof(path), "%s/fork-stress-%d.heap", capture_dir, (int)getpid());
    int fd = open(capture_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    for (;;) {
        int status = fd >= 0 && capture_fd != NULL ? capture_fd(fd, "stress", 0) : capture_path(path, "stress");
        if (status == 0) atomic_fetch_add(&captures, 1);
        if (fd >= 0 && ftruncate(fd, 0) != 0) break;
        if (fd < 0) unlink(path);
        sleep_us(1000);
    }
    return NULL;
}

static void at_exit_allocates(void) {
    char *block = malloc(4096);
    if (block != NULL) memset(block, 7, 4096);
    sink = block;  // left for the capture at exit (a block reachable from a global)
    free(malloc(100));
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fork-stress <run-ms> <capture-dir>\n");
        return 64;
    }
    long run_ms = strtol(argv[1], NULL, 10);
    capture_dir = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("pid %d\n", (int)getpid());
    atexit(at_exit_allocates);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, NULL);
    for (int i = 0; i < FORKERS; i++) pthread_create(&forkers[i], NULL, forker, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, signaller, NULL);
    int (*heap_enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_heap_enabled");
    if (heap_enabled != NULL && heap_enabled() == 1) {
        pthread_create(&thread, NULL, capturer, dlsym(RTLD_DEFAULT, "memharness_agent_capture_heap_fd"));
    }
    // A little less or more than asked, so exit falls at every point of the others' loops from run to run.
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    sleep_us(run_ms * 1000 / 2 + (long)(now.tv_nsec % (run_ms * 1000 + 1)));
    printf("forks %ld captures %ld signals %ld handler_allocations %ld\n", atomic_load(&forks), atomic_load(&captures),
           atomic_load(&signals), atomic_load(&handler_allocations));
    exit(0);
}
