// operator new and delete of the `memharness-exact` executable, counted like malloc.
//
// Debian's libjemalloc exports its own operator new/delete, which allocate inside jemalloc without
// calling malloc: without these definitions, C++ code in the process (the Swift runtime, ICU in
// Foundation) would allocate past the counter.
#include "exact_peak.h"

#include <cstddef>
#include <new>

namespace {

void *allocate_or_throw(std::size_t size, std::size_t alignment) {
    for (;;) {
        if (void *block = memharness_exact_allocate(size, alignment)) return block;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void *allocate_or_null(std::size_t size, std::size_t alignment) noexcept {
    try {
        return allocate_or_throw(size, alignment);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace

void *operator new(std::size_t size) { return allocate_or_throw(size, 0); }
void *operator new[](std::size_t size) { return allocate_or_throw(size, 0); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return allocate_or_null(size, 0); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate_or_null(size, 0); }
void *operator new(std::size_t size, std::align_val_t alignment) {
    return allocate_or_throw(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment) {
    return allocate_or_throw(size, static_cast<std::size_t>(alignment));
}
void *operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    return allocate_or_null(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    return allocate_or_null(size, static_cast<std::size_t>(alignment));
}

// Every delete asks the block's size itself: a caller passing a wrong size to a sized delete
// must not skew the count.
void operator delete(void *block) noexcept { memharness_exact_release(block); }
void operator delete[](void *block) noexcept { memharness_exact_release(block); }
void operator delete(void *block, const std::nothrow_t &) noexcept { memharness_exact_release(block); }
void operator delete[](void *block, const std::nothrow_t &) noexcept { memharness_exact_release(block); }
void operator delete(void *block, std::size_t) noexcept { memharness_exact_release(block); }
void operator delete[](void *block, std::size_t) noexcept { memharness_exact_release(block); }
void operator delete(void *block, std::align_val_t) noexcept { memharness_exact_release(block); }
void operator delete[](void *block, std::align_val_t) noexcept { memharness_exact_release(block); }
void operator delete(void *block, std::align_val_t, const std::nothrow_t &) noexcept { memharness_exact_release(block); }
void operator delete[](void *block, std::align_val_t, const std::nothrow_t &) noexcept { memharness_exact_release(block); }
void operator delete(void *block, std::size_t, std::align_val_t) noexcept { memharness_exact_release(block); }
void operator delete[](void *block, std::size_t, std::align_val_t) noexcept { memharness_exact_release(block); }
