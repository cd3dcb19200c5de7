// The capture's sorted copy of the table of live blocks: where every candidate pointer is looked up (mh_block_of).
//
// The table's entries are copied into one mapping and sorted there, 16 bytes a block and no second buffer (a radix
// sort's spare copy doubled the capture's memory): one in-place radix pass, then an introsort (quicksort on the median
// of three that turns to heapsort past twice the expected depth) of each bucket. Addresses are unique (the table
// holds each live block once).
#include "agent_internal.h"

#include <string.h>
#include <sys/mman.h>

static inline void swap_slots(struct mh_block_slot *a, struct mh_block_slot *b) {
    struct mh_block_slot t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(struct mh_block_slot *blocks, size_t root, size_t count) {
    for (size_t child; (child = 2 * root + 1) < count; root = child) {
        if (child + 1 < count && blocks[child + 1].address > blocks[child].address) child++;
        if (blocks[root].address >= blocks[child].address) return;
        swap_slots(&blocks[root], &blocks[child]);
    }
}

static void heap_sort(struct mh_block_slot *blocks, size_t count) {
    for (size_t i = count / 2; i-- > 0;) sift_down(blocks, i, count);
    for (size_t end = count; end-- > 1;) {
        swap_slots(&blocks[0], &blocks[end]);
        sift_down(blocks, 0, end);
    }
}

static void intro_sort(struct mh_block_slot *blocks, size_t count, int depth) {
    while (count > 16) {
        if (depth-- == 0) {
            heap_sort(blocks, count);
            return;
        }
        // The median of the first, middle and last in the middle; Hoare's partition around it.
        size_t middle = count / 2, last = count - 1;
        if (blocks[middle].address < blocks[0].address) swap_slots(&blocks[middle], &blocks[0]);
        if (blocks[last].address < blocks[0].address) swap_slots(&blocks[last], &blocks[0]);
        if (blocks[last].address < blocks[middle].address) swap_slots(&blocks[last], &blocks[middle]);
        uintptr_t pivot = blocks[middle].address;
        size_t i = 0, j = last;
        for (;;) {
            while (blocks[i].address < pivot) i++;
            while (blocks[j].address > pivot) j--;
            if (i >= j) break;
            swap_slots(&blocks[i], &blocks[j]);
            i++;
            j--;
        }
        // [0, j] and [j + 1, count): the smaller one by recursion (a depth of log2(count) at most), the other here.
        size_t left = j + 1;
        if (left < count - left) {
            intro_sort(blocks, left, depth);
            blocks += left;
            count -= left;
        } else {
            intro_sort(blocks + left, count - left, depth);
            count = left;
        }
    }
    for (size_t i = 1; i < count; i++) {
        struct mh_block_slot next = blocks[i];
        size_t slot = i;
        for (; slot > 0 && blocks[slot - 1].address > next.address; slot--) blocks[slot] = blocks[slot - 1];
        blocks[slot] = next;
    }
}

// The radix pass (American flag sort: counted, then each entry moved into its bucket along the cycle it starts)
// is on the 16 highest bits in which the addresses differ; each bucket, a few dozen blocks, is then introsorted.
// It saves about 30 ms a million blocks against the introsort alone (0.16 s a capture against 0.10 s with the spare
// copy, which also kept the addresses apart, 8 bytes each, for the scan's binary searches). The buckets (1 MiB)
// are in the table copy's mapping, after the blocks: unmapped with it, nothing allocated with the world stopped.
#define MH_BUCKETS (1 << 16)
#define MH_BUCKET_BYTES ((size_t)(2 * MH_BUCKETS + 1) * sizeof(uint64_t))

static inline unsigned bucket_of(uintptr_t address, unsigned shift) { return (unsigned)((address >> shift) & 0xFFFF); }

static void sort_blocks(struct mh_sorted *sorted, uint64_t *buckets) {
    uint64_t *bucket_start = buckets, *bucket_next = buckets + MH_BUCKETS + 1;
    struct mh_block_slot *blocks = sorted->blocks;
    uint64_t count = sorted->count;
    uintptr_t all_or = 0, all_and = ~(uintptr_t)0;
    for (uint64_t i = 0; i < count; i++) {
        all_or |= blocks[i].address;
        all_and &= blocks[i].address;
    }
    uintptr_t differ = all_or ^ all_and;
    if (count < 2 || differ == 0) return;
    int highest = 63 - __builtin_clzll((unsigned long long)differ);
    unsigned shift = highest >= 15 ? (unsigned)(highest - 15) : 0;
    memset(bucket_start, 0, (MH_BUCKETS + 1) * sizeof(uint64_t));
    for (uint64_t i = 0; i < count; i++) bucket_start[bucket_of(blocks[i].address, shift) + 1]++;
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        bucket_start[d + 1] += bucket_start[d];
        bucket_next[d] = bucket_start[d];
    }
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        while (bucket_next[d] < bucket_start[d + 1]) {
            struct mh_block_slot moving = blocks[bucket_next[d]];
            for (unsigned home = bucket_of(moving.address, shift); home != d; home = bucket_of(moving.address, shift)) {
                swap_slots(&moving, &blocks[bucket_next[home]++]);
            }
            blocks[bucket_next[d]++] = moving;
        }
    }
    int depth = 0;
    for (uint64_t n = count; n > 1; n >>= 1) depth += 2;
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        uint64_t size = bucket_start[d + 1] - bucket_start[d];
        if (size > 1) intro_sort(blocks + bucket_start[d], size, depth);
    }
}

// Copies the table into `sorted` (one mapping sized for it, 16 bytes a block, and the sort's buckets) and sorts it
// there; false when no mapping could be had. The mapping is `sorted->blocks`, of `*region_bytes`.
bool mh_sorted_take(struct mh_sorted *sorted, size_t *region_bytes) {
    uint64_t count = (uint64_t)mh_blocks_count();
    size_t block_bytes = (size_t)(count + 1) * sizeof(struct mh_block_slot);
    *region_bytes = block_bytes + MH_BUCKET_BYTES;
    sorted->blocks = mh_map(*region_bytes);
    if (sorted->blocks == NULL) return false;
    sorted->count = mh_blocks_copy(sorted->blocks, count);
    sort_blocks(sorted, (uint64_t *)((char *)sorted->blocks + block_bytes));
    const struct mh_block_slot *last = &sorted->blocks[sorted->count > 0 ? sorted->count - 1 : 0];
    sorted->low = sorted->count > 0 ? sorted->blocks[0].address : 0;
    sorted->high = sorted->count > 0 ? last->address + mh_block_bytes(last) : 0;
    return true;
}

