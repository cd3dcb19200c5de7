// operator new and delete of the agent, counted and sampled like malloc.
//
// Debian's libjemalloc exports its own operator new/delete, which allocate inside jemalloc without
// calling malloc: without these definitions, C++ code in the process (the Swift runtime, ICU in
// Foundation) would allocate past the agent. Each operator passes its own frame to the agent, so a
// sampled stack starts at the operator's caller.
#include <cstddef>
#include <new>

extern "C" {
__attribute__((visibility("hidden"))) void *mh_new_block(std::size_t size, std::size_t alignment, void *frame);
__attribute__((visibility("hidden"))) void mh_release(void *block);
}

namespace {

[[gnu::noinline]] void *allocate_slow(std::size_t size, std::size_t alignment, void *frame) {
    for (;;) {
        if (void *block = mh_new_block(size, alignment, frame)) return block;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

inline void *allocate_or_throw(std::size_t size, std::size_t alignment, void *frame) {
    if (void *block = mh_new_block(size, alignment, frame)) [[likely]] return block;
    void *block = allocate_slow(size, alignment, frame);
    // Not a tail call: the operator's frame, handed down as `frame`, must outlive the allocation.
    __asm__ __volatile__("" ::: "memory");
    return block;
}

inline void *allocate_or_null(std::size_t size, std::size_t alignment, void *frame) noexcept {
    try {
        return allocate_or_throw(size, alignment, frame);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace

#define FRAME() __builtin_frame_address(0)

void *operator new(std::size_t size) { return allocate_or_throw(size, 0, FRAME()); }
void *operator new[](std::size_t size) { return allocate_or_throw(size, 0, FRAME()); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return allocate_or_null(size, 0, FRAME()); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate_or_null(size, 0, FRAME()); }
void *operator new(std::size_t size, std::align_val_t alignment) {
    return allocate_or_throw(size, static_cast<std::size_t>(alignment), FRAME());
}
void *operator new[](std::size_t size, std::align_val_t alignment) {
    return allocate_or_throw(size, static_cast<std::size_t>(alignment), FRAME());
}
void *operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    return allocate_or_null(size, static_cast<std::size_t>(alignment), FRAME());
}
void *operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    return allocate_or_null(size, static_cast<std::size_t>(alignment), FRAME());
}

// Every delete asks the block's size itself: a caller passing a wrong size to a sized delete must not
// skew the count.
void operator delete(void *block) noexcept { mh_release(block); }
void operator delete[](void *block) noexcept { mh_release(block); }
void operator delete(void *block, const std::nothrow_t &) noexcept { mh_release(block); }
void operator delete[](void *block, const std::nothrow_t &) noexcept { mh_release(block); }
void operator delete(void *block, std::size_t) noexcept { mh_release(block); }
void operator delete[](void *block, std::size_t) noexcept { mh_release(block); }
void operator delete(void *block, std::align_val_t) noexcept { mh_release(block); }
void operator delete[](void *block, std::align_val_t) noexcept { mh_release(block); }
void operator delete(void *block, std::align_val_t, const std::nothrow_t &) noexcept { mh_release(block); }
void operator delete[](void *block, std::align_val_t, const std::nothrow_t &) noexcept { mh_release(block); }
void operator delete(void *block, std::size_t, std::align_val_t) noexcept { mh_release(block); }
void operator delete[](void *block, std::size_t, std::align_val_t) noexcept { mh_release(block); }
