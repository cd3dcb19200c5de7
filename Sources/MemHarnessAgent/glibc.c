// glibc's malloc, when it serves the program (no jemalloc loaded): its figures for the sampler's `s` and `r` lines
// (sampler.c) and its heaps among the mappings (resident.c).
//
// mallinfo2 takes each arena's lock in turn and walks its fastbins and bins: it does not allocate, but its cost grows
// with the free chunks it counts, and the program's allocations in that arena wait meanwhile. Measured on this machine
// kind (glibc 2.36, 5 arenas): 1.5 us with 252 free chunks, 56 ms with 45,000, 457 ms with 453,000. So the sampler's
// `s` lines read it at most once per 50 times its last cost (2% of the time; every sample while it is cheap) and repeat
// the last figures in between; the `r` lines read it afresh while it costs under 1 ms (and at exit always), otherwise
// as the `s` lines. A non-main arena's heap is a mapping aligned to HEAP_MAX_SIZE (64 MiB on 64-bit) whose
// first words are glibc's heap_info: the arena, the previous heap of the arena (NULL for its first), the heap's size
// and the size made read-write (the mapping's own length).
#include "agent_internal.h"

#include <malloc.h>

#define MH_GLIBC_HEAP_MAX ((uintptr_t)64 << 20)

struct glibc_heap_info {
    void *arena;
    void *previous;
    size_t size;
    size_t mprotect_size;
};

#define MH_GLIBC_DUTY 50  // mallinfo2 at most once per this many times its own cost (CPU time)

static struct mh_glibc_figures last;  // the sampler's last read (the sampler thread is its one user)
static int64_t last_read_ns, next_read_ns;  // last_read_ns 0: never read
static int64_t last_cost_ns;
#define MH_GLIBC_CHEAP_NS 1000000  // an explanation reads mallinfo2 afresh while it costs less than this

// The calling thread's CPU time, ns: a read's cost without the time the thread waited for a core (a loaded machine
// would otherwise make a cheap read look dear).
static int64_t thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void mh_glibc_figures(struct mh_glibc_figures *figures) {
    int64_t start = thread_cpu_ns();
    struct mallinfo2 info = mallinfo2();
    figures->in_use = (int64_t)(info.uordblks + info.hblkhd);
    figures->free = (int64_t)info.fordblks;
    figures->mapped = (int64_t)info.hblkhd;
    figures->releasable = (int64_t)info.keepcost;
    figures->system = (int64_t)(info.arena + info.hblkhd);
    last_cost_ns = thread_cpu_ns() - start;
    last = *figures;
    last_read_ns = mh_now_ns();
    next_read_ns = last_read_ns + last_cost_ns * MH_GLIBC_DUTY;
}

bool mh_glibc_arena_heap(uintptr_t start, uintptr_t end, bool *first) {
    if (start % MH_GLIBC_HEAP_MAX != 0 || end - start > MH_GLIBC_HEAP_MAX) return false;
    const struct glibc_heap_info *heap = (const struct glibc_heap_info *)start;
    if (heap->arena == NULL || heap->mprotect_size != end - start || heap->size > heap->mprotect_size) return false;
    *first = heap->previous == NULL;
    return true;
}

// The sampler's six allocator slots (allocated, active, resident, mapped, retained, metadata) from glibc's figures:
// in use, -1, held from the kernel twice (an upper bound of its resident pages, as jemalloc's resident is), -1, -1; `extra` (NULL: not wanted): free, mapped chunks, releasable. Returns
// the time of the sample (the figures are an earlier sample's when mallinfo2 was not due).
int64_t mh_glibc_read(int64_t slots[6], int64_t extra[3]) {
    struct mh_glibc_figures figures = last;
    if (mh_now_ns() >= next_read_ns || last_read_ns == 0) mh_glibc_figures(&figures);
    int64_t time_ns = mh_relative_ns();
    const int64_t values[6] = {figures.in_use, -1, figures.system, figures.system, -1, -1};
    for (int i = 0; i < 6; i++) slots[i] = values[i];
    if (extra != NULL) {
        extra[0] = figures.free;
        extra[1] = figures.mapped;
        extra[2] = figures.releasable;
    }
    return time_ns;
}

// An `r` line's values (after, before, allocated, active, resident, metadata, dirty, muzzy, files, stacks, other,
// allocator pages, releasable, arenas) on glibc: in use twice, held from the kernel, -1, free, 0; the chunks of their
// own mapping move from other anonymous to the allocator's pages (counted whole: the agent does not see where glibc
// maps them, so not which of their pages are resident; no more than other anonymous holds, so the parts still add up).
// mallinfo2 is read afresh when `fresh` (the exit), while it costs under 1 ms, or when due; otherwise the last figures
// stand (the smaps parts are
// always fresh, and the metadata, the allocator's pages beyond in use and free, takes up the difference).
void mh_glibc_explain(int64_t values[14], const struct mh_resident_parts *parts, bool fresh) {
    struct mh_glibc_figures figures = last;
    if (fresh || last_cost_ns < MH_GLIBC_CHEAP_NS || mh_now_ns() >= next_read_ns) mh_glibc_figures(&figures);
    int64_t moved = figures.mapped < parts->other_anonymous ? figures.mapped : parts->other_anonymous;
    values[2] = values[3] = figures.in_use;
    values[4] = figures.system;
    values[5] = -1;
    values[6] = figures.free;
    values[7] = 0;
    values[10] = parts->other_anonymous - moved;
    values[11] = parts->jemalloc_pages + moved;
    values[12] = figures.releasable;
    values[13] = parts->arenas;
}
