// The self-check: calls every entry point of the malloc family once and reports how far the live count
// moved, so a test can see that nothing escapes it.
// operator new/delete are called by their mangled names, as any C++ caller's code does.
#include "agent_internal.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *_Znwm(size_t size);                                // operator new(size_t)
extern void *_Znam(size_t size);                                // operator new[](size_t)
extern void *_ZnwmSt11align_val_t(size_t size, size_t align);   // operator new(size_t, align_val_t)
extern void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag); // operator new(size_t, const nothrow_t &)
extern void _ZdlPv(void *block);                                // operator delete(void *)
extern void _ZdaPvm(void *block, size_t size);                  // operator delete[](void *, size_t)
extern void _ZdlPvSt11align_val_t(void *block, size_t align);   // operator delete(void *, align_val_t)
extern void _ZdlPvRKSt9nothrow_t(void *block, const void *tag); // operator delete(void *, const nothrow_t &)
extern const char _ZSt7nothrow;                                  // std::nothrow

// Published blocks: the optimizer may not drop an allocation whose pointer escapes to a volatile.
static void *volatile sink;
static void *publish(void *block) {
    sink = block;
    return block;
}

struct checker {
    memharness_agent_check_row *rows;
    int capacity;
    int count;
};

static void append(struct checker *checker, memharness_agent_check_row row) {
    if (checker->count < checker->capacity) checker->rows[checker->count] = row;
    checker->count += 1;
}

static int64_t live(void) { return atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed); }
static int64_t calls(void) { return mh_allocation_calls(); }

typedef void *(*allocate_fn)(void);
typedef void (*release_fn)(void *);

// `allocate` returns a block; `release` frees it. The usable size is read between the two.
static void check(struct checker *checker, const char *name, allocate_fn allocate, release_fn release) {
    int64_t calls_before = calls();
    int64_t before = live();
    void *block = publish(allocate());
    int64_t after = live();
    int64_t counted = calls() - calls_before;
    int64_t usable = block ? (int64_t)malloc_usable_size(block) : 0;
    release(block);
    int64_t released = live() - after;
    append(checker, (memharness_agent_check_row){name, usable, after - before, -usable, released, counted});
}

static void *a_malloc(void) { return malloc(1000); }
static void *a_malloc0(void) { return malloc(0); }
static void *a_calloc(void) { return calloc(10, 100); }
static void *a_realloc_null(void) { return realloc(NULL, 3000); }
static void *a_reallocarray_null(void) { return reallocarray(NULL, 10, 300); }
static void *a_posix_memalign(void) {
    void *block = NULL;
    return posix_memalign(&block, 64, 1000) == 0 ? block : NULL;
}
static void *a_aligned_alloc(void) { return aligned_alloc(4096, 5000); }
static void *a_memalign(void) { return memalign(256, 1000); }
static void *a_valloc(void) { return valloc(1000); }
static void *a_pvalloc(void) { return pvalloc(5000); }
static void *a_strdup(void) {
    char text[700];
    memset(text, 'x', sizeof(text) - 1);
    text[sizeof(text) - 1] = 0;
    return strdup(text);
}
static void *a_new(void) { return _Znwm(1000); }
static void *a_new_array(void) { return _Znam(5000); }
static void *a_new_aligned(void) { return _ZnwmSt11align_val_t(1000, 128); }
static void *a_new_nothrow(void) { return _ZnwmRKSt9nothrow_t(1000, &_ZSt7nothrow); }
static void r_free(void *block) { free(block); }
static void r_delete(void *block) { _ZdlPv(block); }
static void r_delete_array(void *block) { _ZdaPvm(block, 5000); }
static void r_delete_aligned(void *block) { _ZdlPvSt11align_val_t(block, 128); }
static void r_delete_nothrow(void *block) { _ZdlPvRKSt9nothrow_t(block, &_ZSt7nothrow); }

static void *free_on_this_thread(void *block) {
    free(block);
    return NULL;
}

// Every entry point of the malloc family, C and C++, allocating and releasing once.
static void check_entry_points(struct checker *checker) {
    check(checker, "malloc", a_malloc, r_free);
    check(checker, "malloc(0)", a_malloc0, r_free);
    check(checker, "calloc", a_calloc, r_free);
    check(checker, "realloc(NULL)", a_realloc_null, r_free);
    check(checker, "reallocarray(NULL)", a_reallocarray_null, r_free);
    check(checker, "posix_memalign", a_posix_memalign, r_free);
    check(checker, "aligned_alloc", a_aligned_alloc, r_free);
    check(checker, "memalign", a_memalign, r_free);
    check(checker, "valloc", a_valloc, r_free);
    check(checker, "pvalloc", a_pvalloc, r_free);
    check(checker, "strdup (libc calls malloc)", a_strdup, r_free);
    check(checker, "operator new", a_new, r_delete);
    check(checker, "operator new[]", a_new_array, r_delete_array);
    check(checker, "operator new(align 128)", a_new_aligned, r_delete_aligned);
    check(checker, "operator new(nothrow)", a_new_nothrow, r_delete_nothrow);
}

// realloc: growing moves the block (old and new both counted for an instant), shrinking keeps it.
static void check_resizes(struct checker *checker) {
    static const struct {
        const char *name;
        size_t from, to;
    } resizes[] = {{"realloc (grow, moves)", 1000, 100000}, {"realloc (shrink)", 100000, 90000}};
    for (size_t i = 0; i < sizeof(resizes) / sizeof(resizes[0]); i++) {
        void *block = publish(malloc(resizes[i].from));
        int64_t old_usable = (int64_t)malloc_usable_size(block);
        int64_t calls_before = calls();
        int64_t before = live();
        void *resized = publish(realloc(block, resizes[i].to));
        int64_t after = live();
        int64_t counted = calls() - calls_before;
        int64_t usable = resized ? (int64_t)malloc_usable_size(resized) : 0;
        free(resized);
        append(checker, (memharness_agent_check_row){resizes[i].name, usable - old_usable, after - before, -usable, live() - after, counted});
    }
}

// A block freed by another thread leaves the one shared count. A first thread is started and joined
// before, so what glibc keeps per started thread (its cached stack's bookkeeping) is in place.
static void check_free_on_another_thread(struct checker *checker) {
    pthread_t warmup;
    if (pthread_create(&warmup, NULL, free_on_this_thread, NULL) == 0) pthread_join(warmup, NULL);
    int64_t calls_before = calls();
    int64_t before = live();
    void *block = publish(malloc(20000));
    int64_t after = live();
    int64_t counted = calls() - calls_before;
    int64_t usable = (int64_t)malloc_usable_size(block);
    pthread_t thread;
    int64_t released = 0;
    if (pthread_create(&thread, NULL, free_on_this_thread, block) == 0) {
        pthread_join(thread, NULL);
        released = live() - after;
    }
    append(checker, (memharness_agent_check_row){"free on another thread", usable, after - before, -usable, released, counted});
}

// The high-water mark sees a block that lived for a few instructions.
static void check_peak_of_a_freed_block(struct checker *checker) {
    mh_reset_mark(&mh_counts.peak_bytes);
    int64_t before = live();
    void *block = publish(malloc(10 << 20));
    int64_t usable = (int64_t)malloc_usable_size(block);
    free(block);
    int64_t peak = mh_reset_mark(&mh_counts.peak_bytes) - before;
    append(checker, (memharness_agent_check_row){"peak of a freed block", usable, peak, 0, live() - before, 1});
}

// With stacks on: a 16 MiB block is sampled (probability 1 - exp(-16 MiB / mean), above 1 - 1e-7 for a
// mean up to 1 MiB) and moves the sampled live bytes by its weight, both ways. Skipped for sparser means.
static void check_sampled_block(struct checker *checker) {
    if (!(atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_STACKS) || mh_config.stack_sample_bytes > (1 << 20)) return;
    int64_t taken = atomic_load_explicit(&mh_samples_taken, memory_order_relaxed);
    int64_t before = mh_sampled_live_bytes();
    void *block = publish(malloc(16 << 20));
    int64_t after = mh_sampled_live_bytes();
    int64_t sampled = atomic_load_explicit(&mh_samples_taken, memory_order_relaxed) - taken;
    int64_t weight = mh_weight_bytes(16 << 20, (int64_t)malloc_usable_size(block));
    free(block);
    int64_t released = mh_sampled_live_bytes() - after;
    append(checker, (memharness_agent_check_row){"sampled block (stack table)", weight, after - before, -weight, released, sampled});
}

int memharness_agent_self_check(memharness_agent_check_row *rows, int capacity) {
    if (!(atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_EXACT)) return -1;
    struct checker checker = {rows, capacity < 0 ? 0 : capacity, 0};
    check_entry_points(&checker);
    check_resizes(&checker);
    check_free_on_another_thread(&checker);
    check_peak_of_a_freed_block(&checker);
    check_sampled_block(&checker);
    return checker.count;
}
