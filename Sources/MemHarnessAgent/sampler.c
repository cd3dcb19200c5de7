// The sampler thread for programs the harness did not write (MEMHARNESS_AGENT_INTERVAL_NS +
// MEMHARNESS_AGENT_SAMPLES), and what the agent does when the process exits.
//
// Each sample: `epoch`, then jemalloc's stats.allocated/active/resident/mapped/retained/metadata and the
// small + large nmalloc of all arenas, read by MIB (names are resolved once, before the thread starts);
// the resident set from /proc/self/statm (read with pread on a descriptor kept open, no stdio); one line
// formatted in a stack buffer and written with one write(2). Nothing on this path allocates. Sleeps are
// absolute (clock_nanosleep TIMER_ABSTIME): relative sleeps drift ~12% low on this machine kind. A sampler
// that falls behind by more than a period skips ahead instead of sampling in a burst.
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MH_MIB_CAPACITY 8

struct mib {
    size_t path[MH_MIB_CAPACITY];
    size_t length;
    bool valid;
};

enum { STAT_ALLOCATED, STAT_ACTIVE, STAT_RESIDENT, STAT_MAPPED, STAT_RETAINED, STAT_METADATA, STAT_COUNT };
static const char *const stat_names[STAT_COUNT] = {
    "stats.allocated", "stats.active", "stats.resident", "stats.mapped", "stats.retained", "stats.metadata",
};
// 4096 is MALLCTL_ARENAS_ALL: the sum over every arena.
static const char *const nmalloc_names[2] = {"stats.arenas.4096.small.nmalloc", "stats.arenas.4096.large.nmalloc"};

static struct mib epoch_mib, stat_mibs[STAT_COUNT], nmalloc_mibs[2];
static bool mibs_resolved;
static int samples_fd = -1;
static int statm_fd = -1;
static long page_size;
static pthread_t sampler_thread;
static bool sampler_running;
static _Atomic bool stopping;
static mh_lock write_lock;  // one line at a time; held for good once the exit handler has written `x`
static _Atomic bool finished;
bool mh_forked_child;

static void resolve(struct mib *mib, const char *name) {
    mib->length = MH_MIB_CAPACITY;
    mib->valid = mallctlnametomib(name, mib->path, &mib->length) == 0;
}

static void resolve_mibs(void) {
    if (mibs_resolved) return;
    resolve(&epoch_mib, "epoch");
    for (int i = 0; i < STAT_COUNT; i++) resolve(&stat_mibs[i], stat_names[i]);
    for (int i = 0; i < 2; i++) resolve(&nmalloc_mibs[i], nmalloc_names[i]);
    page_size = sysconf(_SC_PAGESIZE);
    mibs_resolved = true;
}

static int64_t read_size(const struct mib *mib) {
    size_t value = 0, length = sizeof(value);
    if (!mib->valid || mallctlbymib(mib->path, mib->length, &value, &length, NULL, 0) != 0) return -1;
    return (int64_t)value;
}

static int64_t read_u64(const struct mib *mib) {
    uint64_t value = 0;
    size_t length = sizeof(value);
    if (!mib->valid || mallctlbymib(mib->path, mib->length, &value, &length, NULL, 0) != 0) return -1;
    return (int64_t)value;
}

// The resident set and its anonymous part (resident minus the file-backed and shared-memory pages, which
// statm counts as "shared": the kernel's RssAnon), bytes; -1 each when statm cannot be read.
static void resident_bytes(int64_t *resident, int64_t *anonymous) {
    *resident = *anonymous = -1;
    if (statm_fd < 0) return;
    char text[128];
    ssize_t length = pread(statm_fd, text, sizeof(text) - 1, 0);
    if (length <= 0) return;
    text[length] = 0;
    // statm: size resident shared text lib data dt, in pages.
    int64_t fields[3] = {0, 0, 0};
    const char *p = text;
    for (int field = 0; field < 3; field++) {
        if (*p < '0' || *p > '9') return;
        for (; *p >= '0' && *p <= '9'; p++) fields[field] = fields[field] * 10 + (*p - '0');
        if (*p == ' ') p++;
    }
    *resident = fields[1] * page_size;
    *anonymous = (fields[1] - fields[2]) * page_size;
}

// One `s` line; the caller holds write_lock.
static void sample_locked(void) {
    uint64_t epoch = 1;
    if (epoch_mib.valid) mallctlbymib(epoch_mib.path, epoch_mib.length, NULL, NULL, &epoch, sizeof(epoch));
    int64_t time_ns = mh_relative_ns();
    int64_t stats[STAT_COUNT];
    for (int i = 0; i < STAT_COUNT; i++) stats[i] = read_size(&stat_mibs[i]);
    int64_t small = read_u64(&nmalloc_mibs[0]), large = read_u64(&nmalloc_mibs[1]);
    int64_t nmalloc = small < 0 || large < 0 ? -1 : small + large;
    int64_t rss, anonymous;
    resident_bytes(&rss, &anonymous);

    char line[256];  // 's' and 10 fields of at most 21 characters each
    char *p = line;
    *p++ = 's';
    *p++ = ' ';
    p = mh_put_i64(p, time_ns);
    for (int i = 0; i < STAT_COUNT; i++) {
        *p++ = ' ';
        p = mh_put_i64(p, stats[i]);
    }
    *p++ = ' ';
    p = mh_put_i64(p, rss);
    *p++ = ' ';
    p = mh_put_i64(p, nmalloc);
    *p++ = ' ';
    p = mh_put_i64(p, anonymous);
    *p++ = '\n';
    (void)mh_write_all(samples_fd, line, (size_t)(p - line));
}

static int64_t first_sample_at;  // CLOCK_MONOTONIC of the sample taken at start, the schedule's origin

static _Atomic pid_t sampler_tid;

// The sampler thread's id (0: none): a heap capture leaves it running, as it blocks every signal.
pid_t mh_sampler_tid(void) { return atomic_load_explicit(&sampler_tid, memory_order_relaxed); }

static void *sampler_main(void *argument) {
    (void)argument;
    atomic_store_explicit(&sampler_tid, (pid_t)syscall(SYS_gettid), memory_order_relaxed);
    mh_tls.guard = 1;  // whatever jemalloc or libc might allocate here is never sampled
    int64_t period = mh_config.interval_ns;
    int64_t next = first_sample_at;
    while (!atomic_load_explicit(&stopping, memory_order_acquire)) {
        next += period;
        int64_t current = mh_now_ns();
        if (current - next > period) next = current;  // behind by more than a period: skip, no burst
        struct timespec until = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
        }
        mh_acquire(&write_lock);
        if (atomic_load_explicit(&stopping, memory_order_acquire)) {
            mh_release_lock(&write_lock);
            break;
        }
        sample_locked();
        mh_release_lock(&write_lock);
    }
    return NULL;
}

void mh_sampler_start(void) {
    char path[MH_PATH_CAPACITY];
    if (!mh_expand_path(mh_config.samples_path, path, sizeof(path))) {
        mh_warn("MEMHARNESS_AGENT_SAMPLES is too long once %p is replaced; no samples");
        return;
    }
    samples_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (samples_fd < 0) {
        mh_warn("cannot open MEMHARNESS_AGENT_SAMPLES for writing; no samples");
        return;
    }
    static const char header[] = "memharness-agent-samples 1\n";
    (void)mh_write_all(samples_fd, header, sizeof(header) - 1);
    statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);  // /proc/self of this process, fixed at open
    resolve_mibs();
    atomic_store_explicit(&stopping, false, memory_order_relaxed);
    // The first sample now, before the program's main (or, in a forked child, before fork returns): the
    // stream starts from the state at load, however late the thread gets its first turn.
    first_sample_at = mh_now_ns();
    sample_locked();

    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 << 10);  // the sampler's frames are small; 8 MiB would be waste
    // Every signal blocked in the sampler: the program's signals go to the program's threads.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    sampler_running = pthread_create(&sampler_thread, &attributes, sampler_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attributes);
    if (sampler_running) {
        pthread_setname_np(sampler_thread, "memharness-smp");
    } else {
        mh_warn("cannot start the sampler thread; no samples");
    }
}

// ---- Exit -------------------------------------------------------------------------------------------------
// The heap as the program leaves it (MEMHARNESS_AGENT_HEAP_AT_EXIT): after its atexit handlers and library
// destructors, what no root reaches is what it leaked, as valgrind's and LeakSanitizer's reports at exit.
static void capture_heap_at_exit(void) {
    if (mh_config.heap_at_exit_path[0] == 0) return;
    if (mh_forked_child && !mh_pattern_has_pid(mh_config.heap_at_exit_path)) return;
    char path[MH_PATH_CAPACITY];
    if (!mh_expand_path(mh_config.heap_at_exit_path, path, sizeof(path))) {
        mh_warn("MEMHARNESS_AGENT_HEAP_AT_EXIT is too long once %p is replaced; no heap capture");
    } else if (memharness_agent_capture_heap(path, "at exit") != 0) {
        mh_warn("the heap capture at exit failed");
    }
}

static void finish(int status) {
    if (atomic_exchange(&finished, true)) return;
    capture_heap_at_exit();
    if (sampler_running && samples_fd >= 0) {
        atomic_store_explicit(&stopping, true, memory_order_release);
        mh_acquire(&write_lock);  // kept: the sampler thread stops at its next turn, without writing
        sample_locked();  // the state at exit, as the last `s` line
        char line[64];
        char *p = mh_put_str(line, "x ");
        p = mh_put_i64(p, mh_relative_ns());
        *p++ = ' ';
        p = mh_put_i64(p, status);
        *p++ = '\n';
        (void)mh_write_all(samples_fd, line, (size_t)(p - line));
    }
    // A forked child whose pattern has no %p would overwrite its parent's record: it writes none.
    if (mh_config.record_path[0] != 0 && !(mh_forked_child && !mh_pattern_has_pid(mh_config.record_path))) {
        char path[MH_PATH_CAPACITY];
        if (!mh_expand_path(mh_config.record_path, path, sizeof(path))) {
            mh_warn("MEMHARNESS_AGENT_RECORD is too long once %p is replaced; no record");
        } else if (memharness_agent_write_record(path) != 0) {
            mh_warn("cannot write the record to MEMHARNESS_AGENT_RECORD");
        }
    }
    mh_hold_for_reader();
}

// on_exit passes the status given to exit() (or returned by main). The handler is registered by the
// agent's constructor, which runs before libc registers the loader's finalizer (_dl_fini), so it runs
// after every library's destructor and after the program's own atexit handlers: it sees the final state.
// The agent's destructor (run by _dl_fini) only covers the case where on_exit could not be registered.
static bool exit_handler_registered;

static void on_process_exit(int status, void *argument) {
    (void)argument;
    finish(status);
}

__attribute__((destructor)) static void mh_finish_at_unload(void) {
    if (!exit_handler_registered
        && (mh_config.record_path[0] != 0 || mh_config.heap_at_exit_path[0] != 0 || sampler_running)) {
        finish(-1);
    }
}

// The process the handlers were installed in (and, after a fork, the child): a vfork child shares its parent's
// memory and runs no fork handler, so a getpid() that differs from it is one, which must not finish for it.
static pid_t finishing_process;

void mh_exit_handlers_install(void) {
    if (mh_config.record_path[0] == 0 && mh_config.heap_at_exit_path[0] == 0
        && !(mh_config.interval_ns > 0 && mh_config.samples_path[0] != 0)) {
        return;
    }
    finishing_process = getpid();
    exit_handler_registered = on_exit(on_process_exit, NULL) == 0;
}

// _exit and _Exit run no exit handler, and some programs end that way: dash ends every script with _exit. They
// finish here (files written, as at exit), then end the process as glibc's _exit does.
__attribute__((noreturn)) static void exit_now(int status) {
    if (exit_handler_registered && getpid() == finishing_process) finish(status);
    for (;;) syscall(SYS_exit_group, status);
}

void _exit(int status) { exit_now(status); }
void _Exit(int status) { exit_now(status); }

// ---- fork -----------------------------------------------------------------------------------------------
void mh_sampler_fork_prepare(void) { mh_acquire(&write_lock); }
void mh_sampler_fork_parent(void) { mh_release_lock(&write_lock); }

// The child has no sampler thread (fork copies only the calling thread). With %p in the path it gets a
// sampler and a file of its own; without, it stays silent (two processes writing one file interleave).
void mh_sampler_fork_child(void) {
    mh_reset_lock(&write_lock);
    mh_forked_child = true;
    finishing_process = getpid();
    bool had_sampler = sampler_running;
    sampler_running = false;
    if (samples_fd >= 0) close(samples_fd);
    if (statm_fd >= 0) close(statm_fd);  // it reads the parent's /proc entry
    samples_fd = -1;
    statm_fd = -1;
    if (had_sampler && mh_pattern_has_pid(mh_config.samples_path) && !atomic_load(&finished)) mh_sampler_start();
}
