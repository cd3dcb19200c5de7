// The resident set explained: which pages of the process are the allocator's, its thread stacks', its mapped files' and
// other anonymous memory's, each measured, for the sampler's `r` lines (sampler.c).
//
// jemalloc's mappings are known by their maker: the agent's mmap and munmap (exported, so jemalloc's calls through
// its PLT land here) forward to the kernel with syscall(2) and keep the anonymous regions whose caller is
// libjemalloc's code in a fixed table (no allocation, a spinlock of its own that no allocation path takes: jemalloc
// maps while holding its own locks). libjemalloc's code is found once, from /proc/self/maps, with raw reads.
// How many of those pages are resident is asked of the kernel (mincore), not of jemalloc's stats: the line then
// holds jemalloc's own split (allocated, active, dirty, muzzy, resident) beside the kernel's count of its pages.
//
// The rest comes from /proc/self/smaps, read with pread into a static buffer: a mapping with a file (or a path, such
// as a memfd) or the kernel's code ([vdso], [vvar], [vsyscall]) is mapped code and files; [stack], and an anonymous
// read-write mapping right above a PROT_NONE one (the guard glibc puts below each thread's stack), are stacks, less
// any pages of jemalloc's inside them (the kernel merges neighbouring anonymous mappings of the same protection);
// every other anonymous mapping is "other", less jemalloc's pages inside it.
//
// On glibc's malloc (no jemalloc loaded) the allocator's pages are its heaps': the main arena's `[heap]` (brk) and the
// other arenas' heaps (glibc.c tells them by their header), whole mappings, by smaps' Rss. glibc's chunks of their own
// mapping (mallinfo2's hblkhd) are not among them: glibc maps them inside libc, past the agent's mmap (sampler.c
// moves them from "other" to the allocator's).
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MH_REGION_CAPACITY 4096

struct region {
    uintptr_t start, end;
};

static struct region regions[MH_REGION_CAPACITY];
static size_t region_count;
static bool regions_overflowed;  // a region was dropped: the kernel's count of jemalloc's pages is unknown (-1)
static _Atomic int region_lock;  // a bare spinlock: taken under jemalloc's locks, it must never allocate or flush
static uintptr_t jemalloc_low, jemalloc_high;  // libjemalloc's executable mapping; 0, 0: not found (yet)
static _Atomic int jemalloc_range_state;       // 0: not looked up, 1: looked up

static void regions_take(void) {
    while (atomic_exchange_explicit(&region_lock, 1, memory_order_acquire) != 0) mh_cpu_relax();
}
static void regions_release(void) { atomic_store_explicit(&region_lock, 0, memory_order_release); }

// ---- Lines of a /proc file, read with pread into the caller's buffer -------------------------------------------
struct line_reader {
    int fd;
    off_t offset;  // of the buffer's first byte in the file
    char *buffer;
    size_t capacity, used, position;
};

// The next line, NUL-terminated, without its newline; NULL at the end. A line longer than the buffer is cut.
static char *next_line(struct line_reader *reader) {
    for (;;) {
        char *start = reader->buffer + reader->position;
        char *newline = memchr(start, '\n', reader->used - reader->position);
        if (newline != NULL) {
            *newline = 0;
            reader->position = (size_t)(newline - reader->buffer) + 1;
            return start;
        }
        size_t left = reader->used - reader->position;
        if (left == reader->capacity - 1) left = 0;  // a line longer than the buffer: drop its start
        memmove(reader->buffer, start, left);
        reader->offset += (off_t)(reader->used - left);
        reader->used = left;
        reader->position = 0;
        ssize_t count;
        do {
            count = pread(reader->fd, reader->buffer + left, reader->capacity - 1 - left, reader->offset + (off_t)left);
        } while (count < 0 && errno == EINTR);
        if (count <= 0) {
            if (left == 0) return NULL;
            reader->buffer[left] = 0;
            reader->position = reader->used = left;  // the last line, without a newline
            return reader->buffer;
        }
        reader->used = left + (size_t)count;
    }
}

static uintptr_t parse_hex(const char **text) {
    uintptr_t value = 0;
    for (;; (*text)++) {
        char c = **text;
        if (c >= '0' && c <= '9') value = value * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f') value = value * 16 + (uintptr_t)(c - 'a' + 10);
        else return value;
    }
}

// A mapping's header line: "start-end perms offset dev inode   path"; false for any other line.
struct mapping {
    uintptr_t start, end;
    char perms[5];
    bool has_inode;
    const char *path;  // "" when anonymous
};

static bool parse_mapping(const char *line, struct mapping *mapping) {
    const char *p = line;
    mapping->start = parse_hex(&p);
    if (*p != '-' || p == line) return false;
    p++;
    mapping->end = parse_hex(&p);
    if (*p != ' ') return false;
    p++;
    for (int i = 0; i < 4; i++) mapping->perms[i] = p[i] ? p[i] : '-';
    mapping->perms[4] = 0;
    // Past perms, offset and dev: the inode, then the path after spaces.
    for (int field = 0; field < 3; field++) {
        while (*p && *p != ' ') p++;
        while (*p == ' ') p++;
    }
    mapping->has_inode = *p >= '1' && *p <= '9';
    while (*p && *p != ' ') p++;
    while (*p == ' ') p++;
    mapping->path = p;
    return true;
}

// libjemalloc's executable mapping, from /proc/self/maps (once; every caller after the first reads the answer).
static void find_jemalloc(void) {
    static char buffer[4096];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct line_reader reader = {.fd = fd, .buffer = buffer, .capacity = sizeof(buffer)};
    struct mapping mapping;
    for (char *line; (line = next_line(&reader)) != NULL;) {
        if (parse_mapping(line, &mapping) && mapping.perms[2] == 'x' && strstr(mapping.path, "/libjemalloc") != NULL) {
            jemalloc_low = mapping.start;
            jemalloc_high = mapping.end;
            break;
        }
    }
    syscall(SYS_close, fd);
}

static bool made_by_jemalloc(uintptr_t caller) {
    if (atomic_load_explicit(&jemalloc_range_state, memory_order_acquire) == 0) {
        regions_take();
        if (atomic_load_explicit(&jemalloc_range_state, memory_order_relaxed) == 0) {
            find_jemalloc();  // one lookup
            atomic_store_explicit(&jemalloc_range_state, 1, memory_order_release);
        }
        regions_release();
    }
    return caller >= jemalloc_low && caller < jemalloc_high;
}

// In a fork child: the table's lock as free, whichever thread of the parent held it (a program's own mmap or munmap
// may have been in it; jemalloc's cannot, its fork handlers hold its locks).
void mh_resident_child(void) { atomic_store_explicit(&region_lock, 0, memory_order_relaxed); }

// Takes [start, end) out of the table, splitting a region it falls inside. Under region_lock.
static void regions_remove(uintptr_t start, uintptr_t end) {
    for (size_t i = 0; i < region_count;) {
        struct region *region = &regions[i];
        if (region->end <= start || region->start >= end) {
            i++;
        } else if (region->start < start && region->end > end) {  // a hole in the middle: two regions
            if (region_count == MH_REGION_CAPACITY) {
                regions_overflowed = true;
                region->end = start;
            } else {
                regions[region_count++] = (struct region){end, region->end};
                region->end = start;
            }
            i++;
        } else if (region->start < start) {
            region->end = start;
            i++;
        } else if (region->end > end) {
            region->start = end;
            i++;
        } else {
            *region = regions[--region_count];
        }
    }
}

static void regions_add(uintptr_t start, uintptr_t end) {
    regions_remove(start, end);
    for (size_t i = 0; i < region_count; i++) {  // next to one: grow it
        if (regions[i].end == start) {
            regions[i].end = end;
            return;
        }
        if (regions[i].start == end) {
            regions[i].start = start;
            return;
        }
    }
    if (region_count == MH_REGION_CAPACITY) {
        regions_overflowed = true;
        return;
    }
    regions[region_count++] = (struct region){start, end};
}

static uintptr_t page_round_up(uintptr_t value) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return (value + page - 1) & ~(page - 1);
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    uintptr_t caller = (uintptr_t)__builtin_return_address(0);
    long result = syscall(SYS_mmap, address, length, protection, flags, fd, offset);
    if (result != -1 && (flags & MAP_ANONYMOUS) != 0) {
        int saved = errno;
        if (made_by_jemalloc(caller)) {
            regions_take();
            regions_add((uintptr_t)result, (uintptr_t)result + page_round_up(length));
            regions_release();
        }
        errno = saved;
    }
    return (void *)result;
}

int munmap(void *address, size_t length) {
    long result = syscall(SYS_munmap, address, length);
    if (result == 0) {
        regions_take();
        regions_remove((uintptr_t)address, (uintptr_t)address + page_round_up(length));
        regions_release();
    }
    return (int)result;
}

// ---- The explanation -----------------------------------------------------------------------------------------
// Copies of the table and the buffers of one explanation: the caller (the sampler, under its write lock) is the one
// user.
static struct region snapshot[MH_REGION_CAPACITY];
static size_t snapshot_count;
static unsigned char residency[16384];
// Large: each read of smaps takes the process's mmap lock anew and may wait behind its writers (with 16 KiB, 3 of 22
// runs of a server under load lost the last 40 ms of a load phase's samples; none of 14 with 256 KiB).
static char smaps_buffer[256 << 10];

// Resident pages of jemalloc's regions within [start, end), bytes; -1 when the kernel would not say.
static int64_t jemalloc_resident_within(uintptr_t start, uintptr_t end, long page) {
    int64_t pages = 0;
    for (size_t i = 0; i < snapshot_count; i++) {
        uintptr_t low = snapshot[i].start > start ? snapshot[i].start : start;
        uintptr_t high = snapshot[i].end < end ? snapshot[i].end : end;
        for (uintptr_t at = low; at < high;) {
            size_t count = (size_t)((high - at) / (uintptr_t)page);
            if (count > sizeof(residency)) count = sizeof(residency);
            if (mincore((void *)at, count * (size_t)page, residency) != 0) return -1;
            for (size_t k = 0; k < count; k++) pages += residency[k] & 1;
            at += count * (uintptr_t)page;
        }
    }
    return pages * page;
}

static bool is_kernel_code(const char *path) {
    return strcmp(path, "[vdso]") == 0 || strcmp(path, "[vvar]") == 0 || strcmp(path, "[vsyscall]") == 0;
}

// Reads the parts of the resident set (bytes) from `smaps_fd` (an open /proc/self/smaps): mapped code and files,
// stacks, other anonymous memory and jemalloc's pages per the kernel (-1 when unknown). False when smaps cannot be
// read.
bool mh_resident_parts(int smaps_fd, struct mh_resident_parts *parts) {
    *parts = (struct mh_resident_parts){0};
    long page = sysconf(_SC_PAGESIZE);
    regions_take();
    memcpy(snapshot, regions, region_count * sizeof(regions[0]));
    snapshot_count = region_count;
    bool overflowed = regions_overflowed;
    regions_release();

    struct line_reader reader = {.fd = smaps_fd, .buffer = smaps_buffer, .capacity = sizeof(smaps_buffer)};
    enum { FILES, STACKS, OTHER, GLIBC_HEAP } kind = OTHER;
    bool glibc = mh_allocator == MH_ALLOCATOR_GLIBC;
    struct mapping mapping, previous = {0};
    int64_t jemalloc_inside = 0;
    bool any = false;
    for (char *line; (line = next_line(&reader)) != NULL;) {
        if (parse_mapping(line, &mapping)) {
            any = true;
            bool anonymous = !mapping.has_inode && (mapping.path[0] == 0 || mapping.path[0] == '[');
            bool guarded = previous.end == mapping.start && strcmp(previous.perms, "---p") == 0 &&
                           !previous.has_inode && previous.path[0] == 0;
            bool first_heap = false;
            if (!anonymous || is_kernel_code(mapping.path)) {
                kind = FILES;
            } else if (glibc && (strcmp(mapping.path, "[heap]") == 0
                                 || (mapping.perms[0] == 'r' && mh_glibc_arena_heap(mapping.start, mapping.end, &first_heap)))) {
                kind = GLIBC_HEAP;
                parts->arenas += strcmp(mapping.path, "[heap]") == 0 || first_heap;
            } else if (strcmp(mapping.path, "[stack]") == 0 || (guarded && mapping.perms[0] == 'r')) {
                kind = STACKS;
            } else {
                kind = OTHER;
            }
            jemalloc_inside = kind == FILES || kind == GLIBC_HEAP ? 0 : jemalloc_resident_within(mapping.start, mapping.end, page);
            if (jemalloc_inside < 0) overflowed = true;
            previous = mapping;
            previous.path = mapping.path[0] == 0 ? "" : "?";  // the line's text is overwritten by the next read
            continue;
        }
        if (strncmp(line, "Rss:", 4) != 0) continue;
        const char *p = line + 4;
        while (*p == ' ') p++;
        int64_t kilobytes = 0;
        for (; *p >= '0' && *p <= '9'; p++) kilobytes = kilobytes * 10 + (*p - '0');
        int64_t bytes = kilobytes * 1024;
        int64_t own = jemalloc_inside > 0 ? jemalloc_inside : 0;
        parts->jemalloc_pages += own;
        if (kind == FILES) parts->files += bytes;
        else if (kind == GLIBC_HEAP) parts->jemalloc_pages += bytes;
        else if (kind == STACKS) parts->stacks += bytes - own;
        else parts->other_anonymous += bytes - own;
    }
    if (overflowed) parts->jemalloc_pages = -1;
    return any;
}
