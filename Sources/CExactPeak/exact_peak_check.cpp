// The self-check behind `memharness-exact _exact-check`: calls every entry point of the malloc
// family once and reports how far the live count moved, so a test can see that nothing escapes it.
#include "exact_peak.h"

#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <pthread.h>

namespace {

// Published blocks: the optimizer may not drop an allocation whose pointer escapes to a volatile.
void *volatile sink;

void *publish(void *block) {
    sink = block;
    return block;
}

struct Checker {
    memharness_exact_check_row *rows;
    int capacity;
    int count = 0;

    // `allocate` returns a block; `release` frees it. The usable size is read between the two.
    template <typename Allocate, typename Release>
    void check(const char *name, Allocate allocate, Release release) {
        int64_t calls = memharness_exact_allocation_count();
        int64_t before = memharness_exact_live_bytes();
        void *block = publish(allocate());
        int64_t after = memharness_exact_live_bytes();
        int64_t counted = memharness_exact_allocation_count() - calls;
        int64_t usable = block ? static_cast<int64_t>(malloc_usable_size(block)) : 0;
        release(block);
        int64_t released = memharness_exact_live_bytes() - after;
        append({name, usable, after - before, -usable, released, counted});
    }

    void append(memharness_exact_check_row row) {
        if (count < capacity) rows[count] = row;
        count += 1;
    }
};

void *free_on_this_thread(void *block) {
    std::free(block);
    return nullptr;
}

}  // namespace

extern "C" int memharness_exact_self_check(memharness_exact_check_row *rows, int capacity) {
    Checker checker{rows, capacity};
    auto release = [](void *block) { std::free(block); };
    checker.check("malloc", [] { return std::malloc(1000); }, release);
    checker.check("malloc(0)", [] { return std::malloc(0); }, release);
    checker.check("calloc", [] { return std::calloc(10, 100); }, release);
    checker.check("realloc(NULL)", [] { return std::realloc(nullptr, 3000); }, release);
    checker.check("reallocarray(NULL)", [] { return reallocarray(nullptr, 10, 300); }, release);
    checker.check("posix_memalign", [] {
        void *block = nullptr;
        return posix_memalign(&block, 64, 1000) == 0 ? block : nullptr;
    }, release);
    checker.check("aligned_alloc", [] { return aligned_alloc(4096, 5000); }, release);
    checker.check("memalign", [] { return memalign(256, 1000); }, release);
    checker.check("valloc", [] { return valloc(1000); }, release);
    checker.check("pvalloc", [] { return pvalloc(5000); }, release);
    checker.check("strdup (libc calls malloc)", [] {
        char text[700];
        std::memset(text, 'x', sizeof(text) - 1);
        text[sizeof(text) - 1] = 0;
        return static_cast<void *>(strdup(text));
    }, release);
    checker.check("operator new", [] { return ::operator new(1000); }, [](void *block) { ::operator delete(block); });
    checker.check("operator new[]", [] { return ::operator new[](5000); }, [](void *block) { ::operator delete[](block, 5000); });
    checker.check("operator new(align 128)", [] { return ::operator new(1000, std::align_val_t(128)); },
                  [](void *block) { ::operator delete(block, std::align_val_t(128)); });
    checker.check("operator new(nothrow)", [] { return ::operator new(1000, std::nothrow); },
                  [](void *block) { ::operator delete(block, std::nothrow); });

    // realloc: growing moves the block (old and new both counted for an instant), shrinking keeps it.
    struct Resize {
        const char *name;
        std::size_t from;
        std::size_t to;
    };
    const Resize resizes[] = {{"realloc (grow, moves)", 1000, 100000}, {"realloc (shrink)", 100000, 90000}};
    for (const Resize &resize : resizes) {
        void *block = publish(std::malloc(resize.from));
        int64_t old_usable = static_cast<int64_t>(malloc_usable_size(block));
        int64_t calls = memharness_exact_allocation_count();
        int64_t before = memharness_exact_live_bytes();
        void *resized = publish(std::realloc(block, resize.to));
        int64_t after = memharness_exact_live_bytes();
        int64_t counted = memharness_exact_allocation_count() - calls;
        int64_t usable = resized ? static_cast<int64_t>(malloc_usable_size(resized)) : 0;
        std::free(resized);
        checker.append({resize.name, usable - old_usable, after - before, -usable, memharness_exact_live_bytes() - after, counted});
    }

    // A block freed by another thread leaves the one shared count. A first thread is started and
    // joined before, so what glibc keeps per started thread (its cached stack's bookkeeping) is in place.
    {
        pthread_t warmup;
        if (pthread_create(&warmup, nullptr, free_on_this_thread, nullptr) == 0) pthread_join(warmup, nullptr);
        int64_t calls = memharness_exact_allocation_count();
        int64_t before = memharness_exact_live_bytes();
        void *block = publish(std::malloc(20000));
        int64_t after = memharness_exact_live_bytes();
        int64_t counted = memharness_exact_allocation_count() - calls;
        int64_t usable = static_cast<int64_t>(malloc_usable_size(block));
        pthread_t thread;
        int64_t released = 0;
        if (pthread_create(&thread, nullptr, free_on_this_thread, block) == 0) {
            pthread_join(thread, nullptr);
            released = memharness_exact_live_bytes() - after;
        }
        checker.append({"free on another thread", usable, after - before, -usable, released, counted});
    }

    // The high-water mark sees a block that lived for a few instructions.
    {
        memharness_exact_reset_peak();
        int64_t before = memharness_exact_live_bytes();
        void *block = publish(std::malloc(10 << 20));
        int64_t usable = static_cast<int64_t>(malloc_usable_size(block));
        std::free(block);
        int64_t peak = memharness_exact_reset_peak() - before;
        checker.append({"peak of a freed block", usable, peak, 0, memharness_exact_live_bytes() - before, 1});
    }
    return checker.count;
}
