// The malloc family of libmemharness-agent.so: modes from the environment, exact counting, and the
// hand-off to stack sampling. Preloaded before jemalloc, so these definitions win for the whole process
// and jemalloc (found with dlsym(RTLD_NEXT)) does the work.
//
// The fast path. With no mode on, each entry point loads `mh_state`, finds 0, and tail-calls jemalloc's
// own function: one predictable branch and an indirect jump. Any mode on takes the slow path, which is
// the counting malloc family (it replaced the first exact-peak interposer, a target since removed):
// - malloc and free forward to jemalloc's own `malloc` and `free` (their fast paths), found at start-up
//   with dlsym(RTLD_NEXT) and checked to live in the same library as `mallocx`; before that (calls made
//   while the loader and libc start) and if the check fails, mallocx/dallocx.
// - malloc and calloc compute the size-class bytes of a request from jemalloc's size-class formula
//   instead of asking jemalloc (`sallocx`); the formula is compared with `nallocx` for every size up to
//   64 KiB and at every class boundary up to 1 TiB at start-up, and not used when it disagrees or when
//   jemalloc's heap profiling (which promotes sampled blocks) is on.
// - free must ask (`sallocx`): it is the one lookup left, ~3.5 ns.
//
// What is counted: the bytes jemalloc hands out for each live block, as `malloc_usable_size` and
// `stats.allocated` count them (a 1,000-byte request is 1,024 bytes), not jemalloc's own metadata or the
// free blocks in its thread caches. A realloc that moves the block counts the old and the new block
// together for an instant, as jemalloc holds both while it copies.
//
// Where a sampled allocation's stack starts: at the interposer's own frame (`__builtin_frame_address(0)`
// forces it to exist). malloc, free, calloc and realloc tail-call their slow paths, which therefore sit
// where the entry point's frame was and walk from their own frame; the aligned entry points and operator
// new pass theirs down. Either way the first return address is the one into the caller of malloc, and
// any agent frame still above it (-O0 builds make no tail calls) is skipped as agent code by the walk.
//
// The exact count costs one atomic add on the live count per call (one shared cache line) and a sallocx per
// free; the allocation calls are counted per thread. With EXACT alone the churn benchmark
// (Sources/MemHarnessAgent/bench/churn.sh) ran 1.47x of jemalloc alone where one more atomic add per call, for
// the calls, ran 1.81x (15 rounds interleaved); a sized free (sdallocx) instead of the second lookup was slower.
// Stacks imply the exact count (the peak snapshot follows it): with stacks at a 64 KiB mean the loop took 1.64x of
// jemalloc's CPU time, where stacks without the count (the snapshot then followed a 1 ms sampler and missed
// spikes) took 1.28x and EXACT alone 1.38x (9 rounds interleaved, the machine at load 6-8).
//
// On glibc's malloc (the agent preloaded without jemalloc: `--allocator glibc`): the agent links no jemalloc, and its
// extended API (weak) is NULL, so the fallbacks are glibc's own __libc_malloc family, the entry points forward to the
// malloc family next in line (libc's) once found, sizes are glibc's usable bytes (mh_sallocx, from the chunk header)
// and the size-class formula is off. `mh_allocator` says which allocator serves (memharness_agent_allocator).
#include "agent_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

_Atomic unsigned mh_state = MH_UNREAD;
enum mh_allocator mh_allocator = MH_ALLOCATOR_UNKNOWN;
// The peak snapshot's step: 0.5% of the level. At 2% a 64 MiB peak reached by 1 MiB blocks kept a snapshot
// one block short (6% off for a 16 MiB site); 0.5% costs at most ln(peak/start)/0.005 snapshots (~650 for a
// heap growing from 10 MiB to 256 MiB), each a copy of the live set per stack.
struct mh_config mh_config = {.snapshot_step = 0.005};
struct mh_counts mh_counts;

// ---- jemalloc's entry points ------------------------------------------------------------------------
// Until the constructor finds jemalloc's own functions (and whenever it cannot), these stand in for them.
static void *fallback_malloc(size_t size) { return mh_mallocx(size == 0 ? 1 : size, 0); }
static void fallback_free(void *block) {
    if (block != NULL) mh_dallocx(block, 0);
}
static void *fallback_calloc(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return mh_mallocx(total == 0 ? 1 : total, MH_MALLOCX_ZERO);
}
static void *fallback_realloc(void *block, size_t size) {
    if (block == NULL) return fallback_malloc(size);
    if (size == 0) {
        fallback_free(block);
        return NULL;
    }
    return mh_rallocx(block, size, 0);
}
static bool power_of_two(size_t value) { return value != 0 && (value & (value - 1)) == 0; }
static void *fallback_aligned(size_t alignment, size_t size) {
    if (!power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return mh_mallocx(size == 0 ? 1 : size, MH_MALLOCX_LG_ALIGN(__builtin_ctzl(alignment)));
}
static int fallback_posix_memalign(void **result, size_t alignment, size_t size) {
    if (!power_of_two(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
    void *block = fallback_aligned(alignment, size);
    if (block == NULL) return ENOMEM;
    *result = block;
    return 0;
}
static void *fallback_valloc(size_t size) { return fallback_aligned((size_t)sysconf(_SC_PAGESIZE), size); }
static size_t fallback_usable_size(void *block) { return block == NULL ? 0 : mh_sallocx(block, 0); }

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_fn)(size_t, size_t);
typedef void *(*valloc_fn)(size_t);
typedef size_t (*usable_fn)(void *);

// Written by the constructor before any other thread exists; relaxed loads are plain loads.
static struct {
    _Atomic(malloc_fn) malloc;
    _Atomic(free_fn) free;
    _Atomic(calloc_fn) calloc;
    _Atomic(realloc_fn) realloc;
    _Atomic(posix_memalign_fn) posix_memalign;
    _Atomic(aligned_fn) aligned_alloc;
    _Atomic(aligned_fn) memalign;
    _Atomic(valloc_fn) valloc;
    _Atomic(usable_fn) usable_size;
} next = {
    fallback_malloc, fallback_free, fallback_calloc, fallback_realloc, fallback_posix_memalign,
    fallback_aligned, fallback_aligned, fallback_valloc, fallback_usable_size,
};
#define NEXT(name) atomic_load_explicit(&next.name, memory_order_relaxed)

static _Atomic bool forwards_to_fast_paths;
static _Atomic bool size_classes_verified;

// ---- Environment ----------------------------------------------------------------------------------
void mh_warn(const char *message) {
    char line[512];
    char *p = mh_put_str(line, "memharness-agent: ");
    size_t room = sizeof(line) - (size_t)(p - line) - 2;
    size_t length = strnlen(message, room);
    memcpy(p, message, length);
    p += length;
    *p++ = '\n';
    (void)mh_write_all(2, line, (size_t)(p - line));
}

static void warn_value(const char *name, const char *value, const char *expected) {
    char message[400];
    char *p = mh_put_str(message, "ignoring ");
    p = mh_put_str(p, name);
    *p++ = '=';
    size_t length = strnlen(value, 64);
    memcpy(p, value, length);
    p += length;
    p = mh_put_str(p, ": expected ");
    p = mh_put_str(p, expected);
    *p = 0;
    mh_warn(message);
}

// getenv does not allocate; hand-written parsers because strtod may (long inputs) and is locale-bound.
static bool parse_i64(const char *text, int64_t *out) {
    if (text == NULL || *text == 0) return false;
    bool negative = *text == '-';
    if (negative) text++;
    int64_t value = 0;
    for (; *text; text++) {
        if (*text < '0' || *text > '9') return false;
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, *text - '0', &value)) return false;
    }
    *out = negative ? -value : value;
    return true;
}

static bool parse_fraction(const char *text, double *out) {
    if (text == NULL || *text == 0) return false;
    double value = 0, scale = 1;
    bool fraction = false, digits = false;
    for (; *text; text++) {
        if (*text == '.' && !fraction) {
            fraction = true;
        } else if (*text >= '0' && *text <= '9') {
            digits = true;
            if (fraction) {
                scale /= 10;
                value += (*text - '0') * scale;
            } else {
                value = value * 10 + (*text - '0');
            }
        } else {
            return false;
        }
    }
    *out = value;
    return digits;
}

static void read_path(const char *name, char *out) {
    const char *value = getenv(name);
    if (value == NULL || *value == 0) return;
    // Room for the pid that replaces each %p and for the ".tmp" of the record: patterns stay well short.
    if (strlen(value) >= MH_PATH_CAPACITY - 256) {
        warn_value(name, value, "a path shorter than 3840 bytes");
        return;
    }
    strcpy(out, value);
}

static _Atomic int environment_claimed;

// Reads the modes once, at the first call into the agent (libc's own start-up allocates before any
// constructor runs) so that EXACT counts those blocks too. STACKS is switched on later, by the
// constructor, once its tables exist.
unsigned mh_read_environment(void) {
    unsigned state = atomic_load_explicit(&mh_state, memory_order_acquire);
    if (!(state & MH_UNREAD)) return state;
    if (environ == NULL) return state;  // too early even for getenv: this call goes uncounted
    int expected = 0;
    if (!atomic_compare_exchange_strong(&environment_claimed, &expected, 1)) {
        // Another thread is reading it (only possible before main, so it will not take long).
        while ((state = atomic_load_explicit(&mh_state, memory_order_acquire)) & MH_UNREAD) sched_yield();
        return state;
    }
    const char *exact = getenv("MEMHARNESS_AGENT_EXACT");
    mh_config.exact = exact != NULL && (strcmp(exact, "1") == 0 || strcmp(exact, "true") == 0 || strcmp(exact, "yes") == 0);

    const char *text = getenv("MEMHARNESS_AGENT_STACK_SAMPLE_BYTES");
    int64_t number;
    if (text != NULL && *text != 0) {
        if (parse_i64(text, &number) && number >= 0) {
            // Past 1 TiB between samples no block would ever be seen: the same as off, said plainly.
            mh_config.stack_sample_bytes = number > ((int64_t)1 << 40) ? ((int64_t)1 << 40) : number;
        } else {
            warn_value("MEMHARNESS_AGENT_STACK_SAMPLE_BYTES", text, "bytes between samples (0: off)");
        }
    }
    text = getenv("MEMHARNESS_AGENT_SNAPSHOT_STEP");
    double fraction;
    if (text != NULL && *text != 0) {
        if (parse_fraction(text, &fraction)) {
            // A step above 100x would never retake the snapshot: the cap keeps the threshold arithmetic finite.
            mh_config.snapshot_step = fraction > 100 ? 100 : fraction;
        } else {
            warn_value("MEMHARNESS_AGENT_SNAPSHOT_STEP", text, "a fraction such as 0.005");
        }
    }
    text = getenv("MEMHARNESS_AGENT_INTERVAL_NS");
    if (text != NULL && *text != 0) {
        if (parse_i64(text, &number) && number > 0) {
            // Below 10 us the sampler (8-35 us a reading) would spend its whole time sampling.
            mh_config.interval_ns = number < 10000 ? 10000 : number;
        } else {
            warn_value("MEMHARNESS_AGENT_INTERVAL_NS", text, "nanoseconds between samples");
        }
    }
    read_path("MEMHARNESS_AGENT_SAMPLES", mh_config.samples_path);
    read_path("MEMHARNESS_AGENT_RECORD", mh_config.record_path);
    // A capture at exit needs the table of live blocks from the first allocation on: it turns the heap on.
    read_path("MEMHARNESS_AGENT_HEAP_AT_EXIT", mh_config.heap_at_exit_path);
    mh_config.origin_ns = mh_now_ns();
    text = getenv("MEMHARNESS_AGENT_ORIGIN_NS");
    if (text != NULL && *text != 0) {
        if (parse_i64(text, &number) && number >= 0) {
            mh_config.origin_ns = number;
        } else {
            warn_value("MEMHARNESS_AGENT_ORIGIN_NS", text, "CLOCK_MONOTONIC nanoseconds");
        }
    }
    // Stacks imply exact counting: the `peak` snapshot follows the exact high-water mark, so a spike that lasts
    // microseconds is in it (the sampler's footprint, read every millisecond, misses almost every such spike).
    if (mh_config.stack_sample_bytes > 0) mh_config.exact = true;
    const char *heap = getenv("MEMHARNESS_AGENT_HEAP");
    mh_config.heap = (heap != NULL && (strcmp(heap, "1") == 0 || strcmp(heap, "true") == 0 || strcmp(heap, "yes") == 0))
        || mh_config.heap_at_exit_path[0] != 0;
    state = mh_config.exact ? MH_EXACT : 0;
    // The table of live blocks exists before the first block is handed out: no live block predates it.
    if (mh_config.heap) {
        if (mh_blocks_create()) {
            state |= MH_BLOCKS;
            // Every tracked block gets its allocation stack from the first one on (the agent's frames skipped).
            if (mh_stacks_create()) mh_find_agent_text();
        } else {
            mh_warn("could not map the table of live blocks; heap captures are off");
        }
    }
    atomic_store_explicit(&mh_state, state, memory_order_release);
    return state;
}

int64_t mh_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t mh_relative_ns(void) { return mh_now_ns() - mh_config.origin_ns; }

// ---- Counting -------------------------------------------------------------------------------------
static inline void raise_mark(_Atomic int64_t *mark, int64_t now) {
    int64_t seen = atomic_load_explicit(mark, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak_explicit(mark, &seen, now, memory_order_relaxed, memory_order_relaxed)) {
    }
}

// Allocation calls, and the bytes they handed out, are counted per thread: each thread owns a slot on a cache line
// of its own and adds to it with a plain load and store (no locked instruction: one locked add per call cost a third
// of exact counting's time on the churn loop), and a reader sums the slots. A slot is never handed out again, so a
// thread that ended keeps its count. Threads past the last slot share one count, added to atomically. The bytes are
// what the live count grew by for each call: a new block's usable size, a realloc's new block or its growth in place.
// That second plain store costs nothing measurable: EXACT on the churn loop (agent-probe churn 5000000, -O2) took
// 36.2 ns per pair at best and 43.2 at the median with it, 36.6 and 42.3 without (7 rounds interleaved, load 5-10).
#define MH_CALL_SLOTS 1024
static struct mh_call_count call_slots[MH_CALL_SLOTS];
static _Atomic uint32_t call_slots_taken;
static struct mh_call_count shared_calls;

__attribute__((noinline)) static void count_first_call(struct mh_thread *thread, int64_t bytes) {
    uint32_t index = thread->calls_shared ? MH_CALL_SLOTS
                                          : atomic_fetch_add_explicit(&call_slots_taken, 1, memory_order_relaxed);
    if (index >= MH_CALL_SLOTS) {
        thread->calls_shared = 1;
        atomic_fetch_add_explicit(&shared_calls.calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&shared_calls.bytes, bytes, memory_order_relaxed);
        return;
    }
    thread->call_slot = &call_slots[index];
    atomic_store_explicit(&thread->call_slot->calls, 1, memory_order_relaxed);
    atomic_store_explicit(&thread->call_slot->bytes, bytes, memory_order_relaxed);
}

static inline void count_call(int64_t bytes) {
    struct mh_thread *thread = &mh_tls;
    struct mh_call_count *slot = thread->call_slot;
    if (MH_LIKELY(slot != NULL)) {
        // Only this thread writes its slot: relaxed loads and stores, atomic only for the readers.
        atomic_store_explicit(&slot->calls, atomic_load_explicit(&slot->calls, memory_order_relaxed) + 1, memory_order_relaxed);
        atomic_store_explicit(&slot->bytes, atomic_load_explicit(&slot->bytes, memory_order_relaxed) + bytes, memory_order_relaxed);
        return;
    }
    count_first_call(thread, bytes);
}

// The sum of every slot and the shared count: calls when `bytes` is false, their bytes when it is true.
static int64_t summed_calls(bool bytes) {
    uint32_t taken = atomic_load_explicit(&call_slots_taken, memory_order_relaxed);
    if (taken > MH_CALL_SLOTS) taken = MH_CALL_SLOTS;  // the overflowing claims got no slot
    int64_t sum = atomic_load_explicit(bytes ? &shared_calls.bytes : &shared_calls.calls, memory_order_relaxed);
    for (uint32_t index = 0; index < taken; index++) {
        sum += atomic_load_explicit(bytes ? &call_slots[index].bytes : &call_slots[index].calls, memory_order_relaxed);
    }
    return sum;
}

int64_t mh_allocation_calls(void) { return summed_calls(false); }
int64_t mh_allocated_bytes(void) { return summed_calls(true); }

static inline int64_t add_live(int64_t bytes) {
    int64_t now = atomic_fetch_add_explicit(&mh_counts.live_bytes, bytes, memory_order_relaxed) + bytes;
    raise_mark(&mh_counts.peak_bytes, now);
    raise_mark(&mh_counts.phase_peak_bytes, now);
    raise_mark(&mh_counts.record_peak_bytes, now);
    raise_mark(&mh_counts.sample_peak_bytes, now);
    return now;
}

static inline void sub_live(int64_t bytes) {
    atomic_fetch_sub_explicit(&mh_counts.live_bytes, bytes, memory_order_relaxed);
}

// Another thread may allocate between the load of the live bytes and the exchange: its mark went to the
// period that ends, so the live bytes are read again afterwards and the new mark raised to them (such an
// allocation counts in both periods rather than in neither).
int64_t mh_reset_mark(_Atomic int64_t *mark) {
    int64_t previous = atomic_exchange_explicit(mark, atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed), memory_order_relaxed);
    raise_mark(mark, atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed));
    return previous;
}

// jemalloc 5's size classes with its defaults on x86-64 and aarch64 with 4 KiB pages (8-byte tiny class,
// 16-byte quantum, four classes per doubling): sz_s2u_compute without the lookup table.
static inline size_t size_class_of(size_t size) {
    if (size <= 8) return 8;
    size_t lg_floor = (size_t)(63 - __builtin_clzl((size << 1) - 1));
    size_t lg_delta = lg_floor < 7 ? 4 : lg_floor - 3;
    size_t mask = ((size_t)1 << lg_delta) - 1;
    return (size + mask) & ~mask;
}

static inline int64_t usable_of_request(size_t request, void *block) {
    return atomic_load_explicit(&size_classes_verified, memory_order_relaxed) ? (int64_t)size_class_of(request)
                                                                               : (int64_t)mh_sallocx(block, 0);
}

// ---- Re-entry from a signal handler -----------------------------------------------------------------------------
// A signal handler that allocates may interrupt its thread inside the agent, holding a lock of a table (a shard of
// the live blocks, the stack depot) or every lock (a fork's prepare, a capture). Taking the lock again would wait for
// ever; so while the thread holds any (`depth`), or is applying such operations, its tables' part of an allocation or
// a release waits in the thread's ring and is done when it leaves its last lock, in order. The same while the thread
// is inside fork (`forking`): glibc holds its fork-handler lock there between handlers, and another forking thread that
// holds every lock of the agent waits for that lock before its next handler. The exact count needs no
// lock and is kept at once; a deferred release frees the block only once it has left the tables (the address cannot
// be handed out again meanwhile); a deferred allocation is tracked without a stack and never sampled. A full ring
// (32 operations inside one critical section) loses the operation: the block goes untracked, or stays listed.
static inline bool reentered(void) {
    struct mh_thread *thread = &mh_tls;
    return MH_UNLIKELY(thread->depth != 0 || thread->flushing || thread->forking);
}

static bool defer(uintptr_t block, int64_t bytes) {
    struct mh_thread *thread = &mh_tls;
    uint32_t count = atomic_load_explicit(&thread->deferred_count, memory_order_relaxed);
    do {
        if (count >= MH_DEFERRED) {
            mh_blocks_note_lost();
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(&thread->deferred_count, &count, count + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    // A nested handler that defers too takes the next slot; nothing flushes before this write (see mh_deferred_flush).
    thread->deferred[count] = (struct mh_deferred){.block = block, .bytes = bytes};
    return true;
}

// The slack of a tracked block, past the bytes asked for up to its size class, is zeroed when it is at most this: a
// capture scans whole size classes, and the slack of a block (never written by a program that did not ask for it)
// still holds words of the block's earlier life, which would keep alive what they pointed at (a Swift array of 56
// bytes in a 64-byte class kept a leaked task cycle through its last 8 bytes). valgrind and LeakSanitizer scan the
// bytes asked for only. Small classes only (a slack of at most 4 KiB): a large block's slack can be pages the
// program never touches.
#define MH_SLACK_ZEROED 4096

static inline void zero_slack(void *block, size_t request, int64_t usable) {
    if (usable > (int64_t)request && usable - (int64_t)request <= MH_SLACK_ZEROED) {
        memset((char *)block + request, 0, (size_t)usable - request);
    }
}

// The harness's own blocks hold only what the harness wrote, and leave nothing behind: a capture scans them whole as
// roots (a cache the harness grew may keep a program's blocks), so a word of an earlier life in a harness block would
// keep what it pointed at. A harness block is zeroed whole when it is made (the unused capacity of an array the naming
// reserved held the addresses of a capture's blocks, and kept a leaked `box of Int` at exit), its grown part when it is
// reallocated, and whole again when it is released (its words are every block's address, which a program block made
// in that memory later would hold in its own unused capacity).
static inline void zero_harness_block(void *block, size_t from, int64_t usable) {
    if (usable > (int64_t)from) memset((char *)block + from, 0, (size_t)usable - from);
}

// A new block for a request of `request` bytes: sampled first, so a peak snapshot triggered by it includes
// it. `usable` is its size-class bytes when the caller knows them, -1 when they are still to be found (the
// sampler counts requested bytes and asks for the usable size only of the blocks it samples).
static inline void account_allocation(void *block, size_t request, int64_t usable, unsigned state, void *frame) {
    bool deferred = (state & (MH_STACKS | MH_BLOCKS)) && reentered();
    if ((state & MH_STACKS) && !deferred) mh_sample_check(block, (int64_t)request, frame);
    if (state & MH_BLOCKS) {
        if (usable < 0) usable = usable_of_request(request, block);
        if (mh_tls.harness) {
            zero_harness_block(block, 0, usable);
        } else {
            zero_slack(block, request, usable);
        }
        if (deferred) {
            (void)defer((uintptr_t)block, usable);
        } else {
            mh_blocks_insert(block, usable, mh_allocation_stack(frame));
        }
    }
    if (state & MH_EXACT) {
        if (usable < 0) usable = usable_of_request(request, block);
        count_call(usable);
        int64_t now = add_live(usable);
        if ((state & MH_STACKS) && MH_UNLIKELY(now > atomic_load_explicit(&mh_counts.snapshot_threshold, memory_order_relaxed))) {
            mh_peak_candidate(now);
        }
    }
}

// A block about to go back to jemalloc: it leaves the sampled table before the address can be reused.
static inline void account_release(void *block, unsigned state) {
    if (state & MH_STACKS) mh_forget_sampled(block);
    if ((state & MH_BLOCKS) && mh_blocks_take(block) == MH_STACK_HARNESS) {
        zero_harness_block(block, 0, (int64_t)mh_sallocx(block, 0));
    }
    if (state & MH_EXACT) sub_live((int64_t)mh_sallocx(block, 0));
}

// True when the release of `block` was deferred (the caller must not free it: the flush will).
static inline bool release_deferred(void *block, unsigned state) {
    if (!(state & (MH_STACKS | MH_BLOCKS)) || !reentered()) return false;
    // A full ring: the block is never freed (it stays listed and counted; freeing it unlisted could list a stranger).
    (void)defer((uintptr_t)block, 0);
    return true;
}

void mh_deferred_flush(void) {
    struct mh_thread *thread = &mh_tls;
    if (thread->flushing || thread->depth != 0) return;
    thread->flushing = 1;
    unsigned state = atomic_load_explicit(&mh_state, memory_order_relaxed);
    for (uint32_t done = 0;;) {
        uint32_t count = atomic_load_explicit(&thread->deferred_count, memory_order_acquire);
        while (done < count) {
            struct mh_deferred operation = thread->deferred[done++];
            if (operation.bytes > 0) {
                if (state & MH_BLOCKS) mh_blocks_insert((void *)operation.block, operation.bytes, 0);
            } else {
                account_release((void *)operation.block, state);
                NEXT(free)((void *)operation.block);
            }
        }
        // Done unless a handler deferred more meanwhile (it took the next slot: loop again).
        if (atomic_compare_exchange_strong_explicit(&thread->deferred_count, &count, 0, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            break;
        }
    }
    thread->flushing = 0;
    if (atomic_load_explicit(&thread->deferred_count, memory_order_relaxed) != 0) mh_deferred_flush();
}

static bool formula_matches_jemalloc(void) {
    if (!mh_on_jemalloc()) return false;
    bool profiling = false;
    size_t length = sizeof(profiling);
    if (mallctl("opt.prof", &profiling, &length, NULL, 0) == 0 && profiling) return false;
    for (size_t size = 1; size <= 65536; size++) {
        if (size_class_of(size) != nallocx(size, 0)) return false;
    }
    for (unsigned lg = 16; lg < 40; lg++) {
        size_t group = (size_t)1 << lg;
        for (size_t step = 0; step < 4; step++) {
            size_t boundary = group + step * (group >> 2);
            for (size_t size = boundary - 1; size <= boundary + 1; size++) {
                if (size_class_of(size) != nallocx(size, 0)) return false;
            }
        }
    }
    return true;
}

// ---- Slow paths -----------------------------------------------------------------------------------
#define FRAME() __builtin_frame_address(0)

// malloc and free with a mode on: inlined into the entry points (the hottest paths: no extra call).
static inline __attribute__((always_inline)) void *counted_malloc(size_t size, unsigned state, void *frame) {
    if (MH_UNLIKELY(state & MH_UNREAD)) state = mh_read_environment();
    void *block = NEXT(malloc)(size);
    if (MH_UNLIKELY(block == NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    if (state & MH_COUNTING) account_allocation(block, size == 0 ? 1 : size, -1, state, frame);
    return block;
}

static inline __attribute__((always_inline)) void counted_free(void *block, unsigned state) {
    if (block == NULL) return;
    if (MH_UNLIKELY(state & MH_UNREAD)) state = mh_read_environment();
    if (release_deferred(block, state)) return;
    if (state & MH_COUNTING) account_release(block, state);
    NEXT(free)(block);
}

// The slow paths are tail-called by their entry points, so their own frame is where the entry point's
// would be (its return address is the one into malloc's caller): they walk from there. Without the tail
// call (-O0) the entry point's frame is one up, and the walk skips it as agent code. `frame` non-NULL:
// the caller's frame instead (operator new's).
__attribute__((noinline)) static void *malloc_slow(size_t size, unsigned state, void *frame) {
    return counted_malloc(size, state, frame != NULL ? frame : FRAME());
}

__attribute__((noinline)) static void free_slow(void *block, unsigned state) {
    // The heap at its high, before this release lowers it (capture.c, at the peak).
    if ((state & MH_BLOCKS) && block != NULL && MH_UNLIKELY(mh_peak_due())) mh_capture_at_peak(FRAME());
    counted_free(block, state);
}

// The two modes the harness runs with the mode folded in (fewer branches on the hottest paths): EXACT alone
// (no sampling, so no frame) and EXACT with STACKS, which stacks imply (tail-called like malloc_slow, so it walks
// from its own frame).
__attribute__((noinline)) static void *exact_malloc(size_t size) { return counted_malloc(size, MH_EXACT, NULL); }
__attribute__((noinline)) static void exact_free(void *block) { counted_free(block, MH_EXACT); }
#define MH_EXACT_STACKS (MH_EXACT | MH_STACKS)
__attribute__((noinline)) static void *exact_stacks_malloc(size_t size) {
    return counted_malloc(size, MH_EXACT_STACKS, FRAME());
}
__attribute__((noinline)) static void exact_stacks_free(void *block) { counted_free(block, MH_EXACT_STACKS); }

__attribute__((noinline)) static void *calloc_slow(size_t count, size_t size, unsigned state) {
    void *frame = FRAME();
    if (state & MH_UNREAD) state = mh_read_environment();
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    size_t request = total == 0 ? 1 : total;
    void *block = mh_mallocx(request, MH_MALLOCX_ZERO);
    if (block == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (state & MH_COUNTING) account_allocation(block, request, -1, state, frame);
    return block;
}

// realloc from a signal handler that interrupted the agent: a new block, the bytes copied, the old one released as
// any deferred release (the tables learn both when the thread leaves its locks).
static void *realloc_deferred(void *block, size_t size, unsigned state) {
    void *moved = mh_mallocx(size, 0);
    if (moved == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    size_t old = mh_sallocx(block, 0);
    memcpy(moved, block, old < size ? old : size);
    account_allocation(moved, size, (int64_t)mh_sallocx(moved, 0), state, NULL);
    if (!release_deferred(block, state)) {
        account_release(block, state);
        NEXT(free)(block);
    }
    return moved;
}

// A harness block to `size` bytes: always a new block, the old one zeroed before it is released (see
// zero_harness_block; jemalloc's own move would release it with its words).
static void *realloc_harness_block(void *block, size_t size, int64_t before) {
    void *moved = mh_mallocx(size, 0);
    if (moved == NULL) return NULL;
    memcpy(moved, block, (size_t)before < size ? (size_t)before : size);
    zero_harness_block(block, 0, before);
    mh_dallocx(block, 0);
    return moved;
}

__attribute__((noinline)) static void *realloc_slow(void *block, size_t size, unsigned state, void *frame) {
    if (frame == NULL) frame = FRAME();
    if (state & MH_UNREAD) state = mh_read_environment();
    if (block == NULL) return malloc_slow(size, state, frame);
    if (size == 0) {
        // glibc's behaviour (and jemalloc's default zero_realloc:free): free and return NULL.
        free_slow(block, state);
        return NULL;
    }
    if (!(state & MH_COUNTING)) return NEXT(realloc)(block, size);
    if ((state & (MH_STACKS | MH_BLOCKS)) && reentered()) return realloc_deferred(block, size, state);
    struct mh_sampled sampled;
    bool was_sampled = (state & MH_STACKS) && mh_sampled_take(block, &sampled);
    int64_t before = (state & (MH_EXACT | MH_BLOCKS)) ? (int64_t)mh_sallocx(block, 0) : 0;
    // Out of the table while jemalloc may move it: the address can be handed out again at once. Its stack stays.
    uint32_t stack = (state & MH_BLOCKS) ? mh_blocks_take(block) : 0;
    void *moved = stack == MH_STACK_HARNESS ? realloc_harness_block(block, size, before) : mh_rallocx(block, size, 0);
    if (moved == NULL) {
        if (state & MH_BLOCKS) mh_blocks_insert(block, before, stack);
        if (was_sampled) mh_sampled_restore(block, &sampled);
        errno = ENOMEM;
        return NULL;
    }
    int64_t after = (int64_t)mh_sallocx(moved, 0);
    if (state & MH_BLOCKS) {
        if (stack == MH_STACK_HARNESS) {
            zero_harness_block(moved, (size_t)(before < (int64_t)size ? before : (int64_t)size), after);
        } else {
            zero_slack(moved, size, after);
        }
        mh_blocks_insert(moved, after, stack);
    }
    if (state & MH_STACKS) mh_sample_check(moved, (int64_t)size, frame);
    if (state & MH_EXACT) {
        count_call(moved == block ? (after > before ? after - before : 0) : after);
        int64_t now;
        if (moved == block) {
            now = add_live(after - before);
        } else {
            now = add_live(after);
            sub_live(before);
        }
        if ((state & MH_STACKS) && now > atomic_load_explicit(&mh_counts.snapshot_threshold, memory_order_relaxed)) {
            mh_peak_candidate(now);
        }
    }
    return moved;
}

static void *aligned_block(size_t alignment, size_t size, unsigned state, void *frame) {
    if (state & MH_UNREAD) state = mh_read_environment();
    void *block = mh_mallocx(size == 0 ? 1 : size, MH_MALLOCX_LG_ALIGN(__builtin_ctzl(alignment)));
    if (block != NULL && (state & MH_COUNTING)) account_allocation(block, size == 0 ? 1 : size, (int64_t)mh_sallocx(block, 0), state, frame);
    return block;
}

static inline unsigned load_state(void) { return atomic_load_explicit(&mh_state, memory_order_relaxed); }

// ---- The malloc family ----------------------------------------------------------------------------
void *malloc(size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(malloc)(size);
    if (state == MH_EXACT) return exact_malloc(size);
    if (state == MH_EXACT_STACKS) return exact_stacks_malloc(size);
    return malloc_slow(size, state, NULL);
}

void free(void *block) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) {
        NEXT(free)(block);
        return;
    }
    if (state == MH_EXACT) {
        exact_free(block);
        return;
    }
    if (state == MH_EXACT_STACKS) {
        exact_stacks_free(block);
        return;
    }
    free_slow(block, state);
}

void *calloc(size_t count, size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(calloc)(count, size);
    return calloc_slow(count, size, state);
}

void *realloc(void *block, size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(realloc)(block, size);
    return realloc_slow(block, size, state, NULL);
}

// jemalloc has no reallocarray, and glibc's calls its own realloc internally (past any interposer).
void *reallocarray(void *block, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    unsigned state = load_state();
    if (state == 0) return NEXT(realloc)(block, total);
    return realloc_slow(block, total, state, NULL);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(posix_memalign)(result, alignment, size);
    if (!power_of_two(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
    void *block = aligned_block(alignment, size, state, FRAME());
    if (block == NULL) return ENOMEM;
    *result = block;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(aligned_alloc)(alignment, size);
    if (!power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    void *block = aligned_block(alignment, size, state, FRAME());
    if (block == NULL) errno = ENOMEM;
    return block;
}

void *memalign(size_t alignment, size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(memalign)(alignment, size);
    // glibc's memalign takes any alignment and rounds it up to a power of two.
    if (alignment > ((size_t)1 << 62)) {
        errno = EINVAL;
        return NULL;
    }
    size_t rounded = 1;
    while (rounded < alignment) rounded <<= 1;
    void *block = aligned_block(rounded, size, state, FRAME());
    if (block == NULL) errno = ENOMEM;
    return block;
}

void *valloc(size_t size) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) return NEXT(valloc)(size);
    void *block = aligned_block((size_t)sysconf(_SC_PAGESIZE), size, state, FRAME());
    if (block == NULL) errno = ENOMEM;
    return block;
}

// jemalloc has no pvalloc: glibc's would allocate from glibc's own heap, so it is always served here.
void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded;
    if (__builtin_add_overflow(size, page - 1, &rounded)) {
        errno = ENOMEM;
        return NULL;
    }
    rounded = rounded / page * page;
    void *block = aligned_block(page, rounded == 0 ? page : rounded, load_state(), FRAME());
    if (block == NULL) errno = ENOMEM;
    return block;
}

// Counts nothing, whatever the mode: always jemalloc's own.
size_t malloc_usable_size(void *block) { return NEXT(usable_size)(block); }

// operator new's allocation (the C++ file passes the operator's frame): NULL when it fails.
void *mh_new_block(size_t size, size_t alignment, void *frame) {
    unsigned state = load_state();
    if (alignment <= 16) {
        if (MH_LIKELY(state == 0)) return NEXT(malloc)(size == 0 ? 1 : size);
        return malloc_slow(size == 0 ? 1 : size, state, frame);
    }
    if (!power_of_two(alignment)) return NULL;
    return aligned_block(alignment, size, state, frame);
}

void mh_release(void *block) {
    unsigned state = load_state();
    if (MH_LIKELY(state == 0)) {
        NEXT(free)(block);
        return;
    }
    free_slow(block, state);
}

// ---- Control API ----------------------------------------------------------------------------------
static bool exact_on(void) { return (load_state() & MH_EXACT) != 0; }

int memharness_agent_version(void) { return 2; }
int64_t memharness_agent_live_bytes(void) {
    return exact_on() ? atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed) : -1;
}
int64_t memharness_agent_take_peak(void) { return exact_on() ? mh_reset_mark(&mh_counts.peak_bytes) : -1; }
int64_t memharness_agent_take_phase_peak(void) { return exact_on() ? mh_reset_mark(&mh_counts.phase_peak_bytes) : -1; }
int64_t memharness_agent_allocation_count(void) {
    return exact_on() ? mh_allocation_calls() : -1;
}
int memharness_agent_fast_size_classes(void) { return atomic_load_explicit(&size_classes_verified, memory_order_relaxed); }
int memharness_agent_forwards_to_fast_paths(void) { return atomic_load_explicit(&forwards_to_fast_paths, memory_order_relaxed); }
int memharness_agent_allocator(void) { return (int)mh_allocator; }
int memharness_agent_stacks_enabled(void) { return (load_state() & MH_STACKS) != 0; }

// ---- Start-up ---------------------------------------------------------------------------------------
static bool same_library(void *a, void *b) {
    Dl_info first, second;
    if (a == NULL || b == NULL || dladdr(a, &first) == 0 || dladdr(b, &second) == 0) return false;
    return first.dli_fbase == second.dli_fbase;
}

// jemalloc's entry point `name` when it is in the library that exports mallocx (the preloaded jemalloc);
// NULL otherwise (another allocator after the agent, or none), and the fallback keeps serving.
static void *jemalloc_symbol(const char *name, void *extended) {
    void *symbol = dlsym(RTLD_NEXT, name);
    return same_library(symbol, extended) ? symbol : NULL;
}

// glibc's entry points when the next malloc in line is libc's (no jemalloc loaded): the fallbacks (glibc's __libc_*)
// serve until then, and keep serving when another allocator is next in line (blocks must go back where they came from).
static void find_glibc_entry_points(void) {
    void *found_malloc = dlsym(RTLD_NEXT, "malloc");
    if (!same_library(found_malloc, (void *)__libc_malloc)) {
        mh_warn("neither jemalloc nor glibc's malloc is the next in line; using glibc's __libc_malloc");
        mh_allocator = MH_ALLOCATOR_GLIBC;
        return;
    }
    void *symbol;
    if ((symbol = dlsym(RTLD_NEXT, "calloc"))) atomic_store_explicit(&next.calloc, (calloc_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "realloc"))) atomic_store_explicit(&next.realloc, (realloc_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "posix_memalign")))
        atomic_store_explicit(&next.posix_memalign, (posix_memalign_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "aligned_alloc")))
        atomic_store_explicit(&next.aligned_alloc, (aligned_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "memalign"))) atomic_store_explicit(&next.memalign, (aligned_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "valloc"))) atomic_store_explicit(&next.valloc, (valloc_fn)symbol, memory_order_relaxed);
    if ((symbol = dlsym(RTLD_NEXT, "malloc_usable_size")))
        atomic_store_explicit(&next.usable_size, (usable_fn)symbol, memory_order_relaxed);
    void *found_free = dlsym(RTLD_NEXT, "free");
    if (found_free != NULL) atomic_store_explicit(&next.free, (free_fn)found_free, memory_order_relaxed);
    atomic_store_explicit(&next.malloc, (malloc_fn)found_malloc, memory_order_relaxed);
    atomic_store_explicit(&forwards_to_fast_paths, true, memory_order_relaxed);
    mh_allocator = MH_ALLOCATOR_GLIBC;
}

static void find_jemalloc_entry_points(void) {
    if (!mh_on_jemalloc()) {
        find_glibc_entry_points();
        return;
    }
    mh_allocator = MH_ALLOCATOR_JEMALLOC;  // its malloc, or mallocx when its malloc is not next in line
    // dlsym may allocate; until the pointers are stored, those calls take the fallbacks.
    void *extended = (void *)mallocx;
    void *found_malloc = jemalloc_symbol("malloc", extended);
    void *found_free = jemalloc_symbol("free", extended);
    if (found_malloc == NULL || found_free == NULL) {
        mh_warn("jemalloc's malloc is not the next in line (preload the agent first, then libjemalloc.so.2); "
                "using mallocx/dallocx");
        return;
    }
    void *symbol;
    if ((symbol = jemalloc_symbol("calloc", extended))) atomic_store_explicit(&next.calloc, (calloc_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("realloc", extended))) atomic_store_explicit(&next.realloc, (realloc_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("posix_memalign", extended)))
        atomic_store_explicit(&next.posix_memalign, (posix_memalign_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("aligned_alloc", extended)))
        atomic_store_explicit(&next.aligned_alloc, (aligned_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("memalign", extended))) atomic_store_explicit(&next.memalign, (aligned_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("valloc", extended))) atomic_store_explicit(&next.valloc, (valloc_fn)symbol, memory_order_relaxed);
    if ((symbol = jemalloc_symbol("malloc_usable_size", extended)))
        atomic_store_explicit(&next.usable_size, (usable_fn)symbol, memory_order_relaxed);
    atomic_store_explicit(&next.free, (free_fn)found_free, memory_order_relaxed);
    atomic_store_explicit(&next.malloc, (malloc_fn)found_malloc, memory_order_relaxed);
    atomic_store_explicit(&forwards_to_fast_paths, true, memory_order_relaxed);
}

// ---- The exact counts' module ----------------------------------------------------------------------------------------
// The size-class formula is checked against jemalloc, and the record's baseline and peak start at the live bytes now.
bool mh_counts_init(void) {
    // Only exact counting and the block table size every block by the formula; sampled blocks ask jemalloc.
    if (mh_config.exact || mh_config.heap) atomic_store_explicit(&size_classes_verified, formula_matches_jemalloc(), memory_order_relaxed);
    int64_t live = atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.baseline_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.record_peak_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.sample_peak_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.snapshot_threshold, mh_config.exact ? live : 0, memory_order_relaxed);
    return true;
}

// A forked child counts its own: its record's baseline and peak restart at the heap it began with (a copy
// of its parent's), its marks and calls at zero, so each process of a tree writes figures of its own.
void mh_counts_child(void) {
    if (!(load_state() & MH_EXACT)) return;
    int64_t live = atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.baseline_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.record_peak_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.peak_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.phase_peak_bytes, live, memory_order_relaxed);
    atomic_store_explicit(&mh_counts.sample_peak_bytes, live, memory_order_relaxed);
    // Only the forking thread goes on in the child: every slot's count is the parent's, and none is claimed again.
    uint32_t taken = atomic_load_explicit(&call_slots_taken, memory_order_relaxed);
    for (uint32_t index = 0; index < taken && index < MH_CALL_SLOTS; index++) {
        atomic_store_explicit(&call_slots[index].calls, 0, memory_order_relaxed);
        atomic_store_explicit(&call_slots[index].bytes, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&shared_calls.calls, 0, memory_order_relaxed);
    atomic_store_explicit(&shared_calls.bytes, 0, memory_order_relaxed);
}

__attribute__((constructor(101))) static void mh_start(void) {
    (void)mh_read_environment();
    find_jemalloc_entry_points();
    mh_find_agent_text();
    mh_signal_masks_start();
    bool sampler = mh_config.interval_ns > 0 && mh_config.samples_path[0] != 0;
    bool record = mh_config.record_path[0] != 0;
    bool stacks = mh_config.stack_sample_bytes > 0;
    if (!mh_config.exact && !mh_config.heap && !stacks && !sampler && !record) return;  // nothing on: forward all
    mh_lifecycle_start();
}

// ---- Small helpers shared by the agent's files --------------------------------------------------------
// The agent's storage never comes from the allocator it interposes: tables, buffers and captures are mappings.
void *mh_map(size_t bytes) {
    void *region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return region == MAP_FAILED ? NULL : region;
}

bool mh_write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes += written;
        length -= (size_t)written;
    }
    return true;
}

bool mh_pattern_has_pid(const char *pattern) { return strstr(pattern, "%p") != NULL; }

bool mh_expand_path(const char *pattern, char *out, size_t capacity) {
    char pid[24];
    char *end = mh_put_i64(pid, (int64_t)getpid());
    size_t pid_length = (size_t)(end - pid);
    size_t used = 0;
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            if (used + pid_length + 1 > capacity) return false;
            memcpy(out + used, pid, pid_length);
            used += pid_length;
            p++;
        } else {
            if (used + 2 > capacity) return false;
            out[used++] = *p;
        }
    }
    out[used] = 0;
    return true;
}
