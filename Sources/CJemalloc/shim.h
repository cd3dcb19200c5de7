// The unprefixed Debian jemalloc: linking it replaces the process allocator, so every
// malloc of the Swift runtime, Foundation, Dispatch and libc is counted by `stats.*`.
#include <jemalloc/jemalloc.h>
