// The table of every live block (MEMHARNESS_AGENT_HEAP=1), for heap captures: each allocation of the malloc family and
// operator new is inserted (address, size-class bytes, allocation stack's depot id) and each release removed, in one
// of 256 open-addressing shards (linear probing, backward-shift deletion: no tombstones), each behind its own lock and
// grown by doubling into a fresh mapping. It is created at the first call into the agent, before libc's start-up
// allocates, so no live block predates it. A slot is 16 bytes: the address, and the size (40 bits) with the stack id
// (24 bits) in one word.
#include "agent_internal.h"

#include <sys/mman.h>

#define MH_HEAP_SHARD_BITS 8
#define MH_HEAP_SHARDS (1u << MH_HEAP_SHARD_BITS)
#define MH_HEAP_INITIAL_LOG2 10  // 1,024 slots (16 KiB) a shard to start with

struct mh_heap_shard {
    mh_lock lock;
    uint32_t capacity_log2;
    uint64_t count;
    struct mh_block_slot *slots;
} __attribute__((aligned(64)));

static struct mh_heap_shard heap_shards[MH_HEAP_SHARDS];
static bool heap_ready;
static _Atomic int64_t blocks_lost;
// The listed blocks' size-class bytes in all (what a capture would hold), kept beside the shards: the capture at the
// peak (peak.c) follows it without summing 256 shards on every release.
_Atomic int64_t mh_blocks_live_bytes;

bool mh_blocks_create(void) {
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) {
        heap_shards[i].capacity_log2 = MH_HEAP_INITIAL_LOG2;
        heap_shards[i].slots = mh_map(sizeof(struct mh_block_slot) << MH_HEAP_INITIAL_LOG2);
        if (heap_shards[i].slots == NULL) return false;
    }
    heap_ready = true;
    return true;
}

bool mh_blocks_ready(void) { return heap_ready; }

static inline struct mh_heap_shard *heap_shard_of(uint64_t hash) { return &heap_shards[hash >> (64 - MH_HEAP_SHARD_BITS)]; }
static inline size_t heap_home(uint64_t hash, uint32_t capacity_log2) {
    return (size_t)((hash << MH_HEAP_SHARD_BITS) >> (64 - capacity_log2));
}

// Puts the slot in place; an address already listed (a release that was lost) is replaced, never listed twice.
static bool place(struct mh_block_slot *slots, uint32_t capacity_log2, struct mh_block_slot slot) {
    size_t mask = ((size_t)1 << capacity_log2) - 1;
    size_t index = heap_home(mh_pointer_hash((const void *)slot.address), capacity_log2);
    while (slots[index].address != 0 && slots[index].address != slot.address) index = (index + 1) & mask;
    bool added = slots[index].address == 0;
    slots[index] = slot;
    return added;
}

// Doubles a shard at half full; when no mapping can be had the shard fills up further (probes get longer).
static void grow(struct mh_heap_shard *shard) {
    uint32_t next_log2 = shard->capacity_log2 + 1;
    struct mh_block_slot *bigger = mh_map(sizeof(struct mh_block_slot) << next_log2);
    if (bigger == NULL) return;
    size_t capacity = (size_t)1 << shard->capacity_log2;
    for (size_t i = 0; i < capacity; i++) {
        if (shard->slots[i].address != 0) place(bigger, next_log2, shard->slots[i]);
    }
    munmap(shard->slots, sizeof(struct mh_block_slot) * capacity);
    shard->slots = bigger;
    shard->capacity_log2 = next_log2;
}

void mh_blocks_insert(void *block, int64_t bytes, uint32_t stack) {
    uint64_t hash = mh_pointer_hash(block);
    struct mh_heap_shard *shard = heap_shard_of(hash);
    uint64_t size = (uint64_t)bytes < ((uint64_t)1 << MH_BLOCK_SIZE_BITS) ? (uint64_t)bytes
                                                                         : ((uint64_t)1 << MH_BLOCK_SIZE_BITS) - 1;
    struct mh_block_slot slot = {(uintptr_t)block, size | ((uint64_t)stack << MH_BLOCK_SIZE_BITS)};
    mh_lock_take(&shard->lock);
    size_t capacity = (size_t)1 << shard->capacity_log2;
    if (shard->count + 1 >= capacity / 2) grow(shard);
    capacity = (size_t)1 << shard->capacity_log2;
    // Full but for one slot (no mapping for a bigger table): the block goes untracked rather than loop forever.
    if (shard->count + 1 < capacity) {
        if (place(shard->slots, shard->capacity_log2, slot)) {
            shard->count++;
            mh_peak_note_live(atomic_fetch_add_explicit(&mh_blocks_live_bytes, (int64_t)size, memory_order_relaxed) +
                              (int64_t)size);
        }
    } else {
        mh_blocks_note_lost();
    }
    mh_lock_release(&shard->lock);
}

// Removes the block; its stack id, 0 when it was not listed.
uint32_t mh_blocks_take(void *block) {
    uint64_t hash = mh_pointer_hash(block);
    struct mh_heap_shard *shard = heap_shard_of(hash);
    uint32_t stack = 0;
    mh_lock_take(&shard->lock);
    size_t mask = ((size_t)1 << shard->capacity_log2) - 1;
    struct mh_block_slot *slots = shard->slots;
    size_t index = heap_home(hash, shard->capacity_log2);
    while (slots[index].address != 0 && slots[index].address != (uintptr_t)block) index = (index + 1) & mask;
    if (slots[index].address != 0) {
        stack = mh_block_stack(&slots[index]);
        atomic_fetch_sub_explicit(&mh_blocks_live_bytes, (int64_t)mh_block_bytes(&slots[index]), memory_order_relaxed);
        // Backward-shift deletion: later entries of the run move up when their home allows it.
        size_t hole = index;
        for (size_t next = (hole + 1) & mask; slots[next].address != 0; next = (next + 1) & mask) {
            size_t home = heap_home(mh_pointer_hash((const void *)slots[next].address), shard->capacity_log2);
            bool movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next);
            if (movable) {
                slots[hole] = slots[next];
                hole = next;
            }
        }
        slots[hole] = (struct mh_block_slot){0, 0};
        shard->count--;
    }
    mh_lock_release(&shard->lock);
    return stack;
}


int64_t mh_blocks_count(void) {
    int64_t count = 0;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) count += (int64_t)heap_shards[i].count;  // a racy sum: a reading
    return count;
}

int64_t mh_blocks_lost(void) { return atomic_load_explicit(&blocks_lost, memory_order_relaxed); }
void mh_blocks_note_lost(void) { atomic_fetch_add_explicit(&blocks_lost, 1, memory_order_relaxed); }

// The next listed slot from (*shard, *index) on, moving the cursor past it; NULL after the last. The one walk of the
// table, for the capture's copy and for the harness's blocks (the world is stopped, every shard's lock held).
static inline const struct mh_block_slot *next_listed(size_t *shard, size_t *index) {
    for (; *shard < MH_HEAP_SHARDS; (*shard)++, *index = 0) {
        size_t slots = (size_t)1 << heap_shards[*shard].capacity_log2;
        while (*index < slots) {
            const struct mh_block_slot *slot = &heap_shards[*shard].slots[(*index)++];
            if (slot->address != 0) return slot;
        }
    }
    return NULL;
}

uint64_t mh_blocks_copy(struct mh_block_slot *out, uint64_t capacity) {
    uint64_t count = 0;
    size_t shard = 0, index = 0;
    for (const struct mh_block_slot *slot; count < capacity && (slot = next_listed(&shard, &index)) != NULL;) {
        // The harness's own blocks are left out: what a capture lists is the program's.
        if (mh_block_stack(slot) != MH_STACK_HARNESS) out[count++] = *slot;
    }
    return count;
}

void mh_blocks_each_harness(void (*visit)(uintptr_t address, uint64_t bytes, void *context), void *context) {
    size_t shard = 0, index = 0;
    for (const struct mh_block_slot *slot; (slot = next_listed(&shard, &index)) != NULL;) {
        if (mh_block_stack(slot) == MH_STACK_HARNESS) visit(slot->address, mh_block_bytes(slot), context);
    }
}

// ---- The lifecycle's steps ------------------------------------------------------------------------------------------
void mh_blocks_lock(void) {
    if (!heap_ready) return;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) mh_lock_take(&heap_shards[i].lock);
}

void mh_blocks_unlock(void) {
    if (!heap_ready) return;
    for (size_t i = MH_HEAP_SHARDS; i-- > 0;) mh_lock_release(&heap_shards[i].lock);
}

void mh_blocks_child(void) {
    if (!heap_ready) return;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) mh_lock_reset(&heap_shards[i].lock);
}
