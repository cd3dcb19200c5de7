// The sampler thread for programs the harness did not write (MEMHARNESS_AGENT_INTERVAL_NS +
// MEMHARNESS_AGENT_SAMPLES): a module of the lifecycle (its write lock, its restart in a fork child, its last sample
// and `x` line at exit).
//
// Each sample: `epoch`, then jemalloc's stats.allocated/active/resident/mapped/retained/metadata and the
// small + large nmalloc of all arenas, read by MIB (names are resolved once, before the thread starts);
// the resident set from /proc/self/statm (read with pread on a descriptor kept open, no stdio); with exact counting
// on, the agent's own live bytes, allocation calls and the bytes those calls handed out (-1 each otherwise: jemalloc's
// nmalloc counts thread-cache fills, not calls, so only these tell one more allocation per request), and the highest
// live bytes since the previous line (its mark reset as it is read: no high between two samples is missed, whatever
// the interval, so a server's default 10 ms loses nothing of its exact peaks); one line
// through the agent's writer, flushed with one write(2) as it is made. Nothing on this path allocates. Most of a
// sample's cost is `epoch`, which merges every arena's statistics: 47 us with 9 arenas on an idle machine here,
// 170-250 us beside 4-8 busy threads (the eight reads by MIB take 2-5 us together, statm 7-10 us). Sleeps are
// absolute (clock_nanosleep TIMER_ABSTIME): relative sleeps drift ~12% low on this machine kind. A sampler
// that falls behind by more than a period skips ahead instead of sampling in a burst.
//
// The resident set explained (`r` lines, resident.c): at each new high of the resident set at least
// `MH_EXPLAIN_STEP` above the last one explained (the first sample's included), again once such a high read while
// the resident set moved has settled, and at exit (as the end: the exit's own sample explains no high, since the
// exit path faults in a few more file pages once the program may have freed what made its peak, and a high read
// there would explain the peak as freed memory). Each reads jemalloc's stats (allocated, active, resident,
// metadata, dirty and muzzy pages), then /proc/self/smaps and jemalloc's pages per the kernel, then statm once more:
// the resident set before and after the walk bound what it saw.
//
// On glibc's malloc (no jemalloc loaded: its mallctl names resolve to nothing) the stream's second line says so
// (`a glibc`; `a jemalloc` otherwise) and glibc.c fills the allocator's figures from mallinfo2 instead: an `s`
// line's six as in use, -1, held from the kernel twice, -1, -1, then free, mapped chunks and releasable at its end;
// an `r` line's as in use, in use, held from the kernel, -1, free, 0, with glibc's heaps' pages, and releasable and
// the arena count at its end. mallinfo2's cost grows with the free chunks: glibc.c reads it at most 2% of the time.
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
static const char *const page_names[2] = {"stats.arenas.4096.pdirty", "stats.arenas.4096.pmuzzy"};
static struct mib page_mibs[2];
static int smaps_fd = -1;
static int64_t explained_high;  // the resident set at the last `r` line of a high; 0: none yet
static bool explained_moving;   // the resident set moved while that line's parts were read
static int64_t last_rss;        // the last sample's resident set
#define MH_EXPLAIN_STEP 0.03
static bool mibs_resolved;
static struct mh_writer samples;  // the stream (fd -1: none); written under write_lock
static char samples_buffer[512];
static int statm_fd = -1;
static long page_size;
static pthread_t sampler_thread;
static bool sampler_running;
static _Atomic bool stopping;
static mh_lock write_lock;  // one line at a time
static bool closed;         // the `x` line is written: nothing more (under write_lock)

static void resolve(struct mib *mib, const char *name) {
    mib->length = MH_MIB_CAPACITY;
    mib->valid = mallctlnametomib != NULL && mallctlnametomib(name, mib->path, &mib->length) == 0;
}

static void resolve_mibs(void) {
    if (mibs_resolved) return;
    resolve(&epoch_mib, "epoch");
    for (int i = 0; i < STAT_COUNT; i++) resolve(&stat_mibs[i], stat_names[i]);
    for (int i = 0; i < 2; i++) resolve(&nmalloc_mibs[i], nmalloc_names[i]);
    for (int i = 0; i < 2; i++) resolve(&page_mibs[i], page_names[i]);
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

// jemalloc's six figures, fresh (`epoch` first); returns the time they were read.
static int64_t read_stats(int64_t stats[STAT_COUNT]) {
    if (mh_allocator == MH_ALLOCATOR_GLIBC) return mh_glibc_read(stats, NULL);
    uint64_t epoch = 1;
    if (epoch_mib.valid) mallctlbymib(epoch_mib.path, epoch_mib.length, NULL, NULL, &epoch, sizeof(epoch));
    int64_t time_ns = mh_relative_ns();
    for (int i = 0; i < STAT_COUNT; i++) stats[i] = read_size(&stat_mibs[i]);
    return time_ns;
}

// One `r` line (point: 'h' a high of the resident set, 'e' the end); the caller holds write_lock. Returns whether
// the resident set moved while the parts were read.
static bool explain_locked(char point) {
    if (smaps_fd < 0) return false;
    int64_t before, after, anonymous;
    resident_bytes(&before, &anonymous);
    int64_t stats[STAT_COUNT];
    int64_t time_ns = read_stats(stats);
    int64_t dirty = read_size(&page_mibs[0]), muzzy = read_size(&page_mibs[1]);
    struct mh_resident_parts parts;
    if (!mh_resident_parts(smaps_fd, &parts)) return false;
    resident_bytes(&after, &anonymous);
    mh_put_text(&samples, "r ");
    mh_put_decimal(&samples, time_ns);
    mh_put_char(&samples, ' ');
    mh_put_char(&samples, point);
    int64_t values[] = {
        after, before, stats[STAT_ALLOCATED], stats[STAT_ACTIVE], stats[STAT_RESIDENT], stats[STAT_METADATA],
        dirty < 0 ? -1 : dirty * page_size, muzzy < 0 ? -1 : muzzy * page_size, parts.files, parts.stacks,
        parts.other_anonymous, parts.jemalloc_pages, -1, -1,
    };
    if (mh_allocator == MH_ALLOCATOR_GLIBC) mh_glibc_explain(values, &parts, point == 'e');
    size_t count = mh_allocator == MH_ALLOCATOR_GLIBC ? 14 : 12;  // glibc's two more: releasable, arenas
    for (size_t i = 0; i < count; i++) {
        mh_put_char(&samples, ' ');
        mh_put_decimal(&samples, values[i]);
    }
    mh_put_char(&samples, '\n');
    mh_writer_flush(&samples);
    return before != after;
}

// One `s` line, and, when `explain_highs`, an `r` line when the resident set reached a new high a step above the
// last one explained, or when a high explained while it moved has settled (two samples alike, at or above it); the
// caller holds write_lock.
static void sample_locked(bool explain_highs) {
    int64_t stats[STAT_COUNT], glibc[3] = {-1, -1, -1};
    int64_t time_ns = mh_allocator == MH_ALLOCATOR_GLIBC ? mh_glibc_read(stats, glibc) : read_stats(stats);
    int64_t small = read_u64(&nmalloc_mibs[0]), large = read_u64(&nmalloc_mibs[1]);
    int64_t nmalloc = small < 0 || large < 0 ? -1 : small + large;
    int64_t rss, anonymous;
    resident_bytes(&rss, &anonymous);

    mh_put_text(&samples, "s ");
    mh_put_decimal(&samples, time_ns);
    for (int i = 0; i < STAT_COUNT; i++) {
        mh_put_char(&samples, ' ');
        mh_put_decimal(&samples, stats[i]);
    }
    mh_put_char(&samples, ' ');
    mh_put_decimal(&samples, rss);
    mh_put_char(&samples, ' ');
    mh_put_decimal(&samples, nmalloc);
    mh_put_char(&samples, ' ');
    mh_put_decimal(&samples, anonymous);
    bool exact = (atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_EXACT) != 0;
    int64_t counts[4] = {-1, -1, -1, -1};
    if (exact) {
        counts[0] = atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed);
        counts[1] = mh_allocation_calls();
        counts[2] = mh_allocated_bytes();
        counts[3] = mh_reset_mark(&mh_counts.sample_peak_bytes);
    }
    for (int i = 0; i < 4; i++) {
        mh_put_char(&samples, ' ');
        mh_put_decimal(&samples, counts[i]);
    }
    for (int i = 0; i < 3 && mh_allocator == MH_ALLOCATOR_GLIBC; i++) {
        mh_put_char(&samples, ' ');
        mh_put_decimal(&samples, glibc[i]);
    }
    mh_put_char(&samples, '\n');
    mh_writer_flush(&samples);
    bool settled = explained_moving && rss == last_rss && rss >= explained_high;
    last_rss = rss;
    if (explain_highs && rss > 0 && (settled || rss > explained_high + (int64_t)((double)explained_high * MH_EXPLAIN_STEP))) {
        explained_high = rss;
        explained_moving = explain_locked('h');
    }
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
        mh_lock_take(&write_lock);
        if (closed || atomic_load_explicit(&stopping, memory_order_acquire)) {
            mh_lock_release(&write_lock);
            break;
        }
        sample_locked(true);
        mh_lock_release(&write_lock);
    }
    return NULL;
}

static void sampler_start(void) {
    char path[MH_PATH_CAPACITY];
    if (!mh_expand_path(mh_config.samples_path, path, sizeof(path))) {
        mh_warn("MEMHARNESS_AGENT_SAMPLES is too long once %p is replaced; no samples");
        return;
    }
    if (mh_writer_stream(&samples, path, samples_buffer, sizeof(samples_buffer)) != 0) {
        samples.fd = -1;
        mh_warn("cannot open MEMHARNESS_AGENT_SAMPLES for writing; no samples");
        return;
    }
    mh_writer_header(&samples, MH_FILE_SAMPLES);
    mh_put_text(&samples, mh_allocator == MH_ALLOCATOR_GLIBC ? "a glibc\n" : "a jemalloc\n");
    mh_writer_flush(&samples);
    closed = false;
    statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);  // /proc/self of this process, fixed at open
    smaps_fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    explained_high = last_rss = 0;
    explained_moving = false;
    resolve_mibs();
    atomic_store_explicit(&stopping, false, memory_order_relaxed);
    // The first sample now, before the program's main (or, in a forked child, before fork returns): the
    // stream starts from the state at load, however late the thread gets its first turn.
    first_sample_at = mh_now_ns();
    sample_locked(true);

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

// ---- The lifecycle's steps ------------------------------------------------------------------------------------------
bool mh_sampler_init(void) {
    samples.fd = -1;
    if (mh_config.interval_ns > 0 && mh_config.samples_path[0] != 0) sampler_start();
    return true;
}

void mh_sampler_lock(void) { mh_lock_take(&write_lock); }
void mh_sampler_unlock(void) { mh_lock_release(&write_lock); }

// The child has no sampler thread (fork copies only the calling thread). With %p in the path it gets a
// sampler and a file of its own; without, it stays silent (two processes writing one file interleave).
void mh_sampler_child(void) {
    mh_lock_reset(&write_lock);
    mh_resident_child();
    bool had_sampler = sampler_running;
    sampler_running = false;
    atomic_store_explicit(&sampler_tid, 0, memory_order_relaxed);
    if (samples.fd >= 0) close(samples.fd);
    if (statm_fd >= 0) close(statm_fd);  // it reads the parent's /proc entry
    if (smaps_fd >= 0) close(smaps_fd);
    samples.fd = -1;
    statm_fd = -1;
    smaps_fd = -1;
    if (had_sampler && mh_pattern_has_pid(mh_config.samples_path)) sampler_start();
}

// The state at exit, as the last `s` line, then `x` and the status: the stream is closed (the sampler thread stops
// at its next turn without writing). The lock is released: a fork after this (a destructor's) must not wait for it.
void mh_sampler_at_exit(int status, const struct mh_stopped *caller) {
    (void)caller;
    if (!sampler_running || samples.fd < 0) return;
    atomic_store_explicit(&stopping, true, memory_order_release);
    mh_lock_take(&write_lock);
    if (!closed) {
        sample_locked(false);
        explain_locked('e');
        mh_put_text(&samples, "x ");
        mh_put_decimal(&samples, mh_relative_ns());
        mh_put_char(&samples, ' ');
        mh_put_decimal(&samples, status);
        mh_put_char(&samples, '\n');
        mh_writer_flush(&samples);
        closed = true;
    }
    mh_lock_release(&write_lock);
}
