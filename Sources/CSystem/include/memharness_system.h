// System calls the Swift Glibc module does not expose (they need _GNU_SOURCE or are raw syscalls).
#ifndef MEMHARNESS_SYSTEM_H
#define MEMHARNESS_SYSTEM_H

/// Atomically exchanges the directory entries `a` and `b` (renameat2 with RENAME_EXCHANGE): both must
/// exist; afterwards each name refers to what the other did. Returns 0, or -1 with errno set.
int memharness_rename_exchange(const char *a, const char *b);

/// Writes the path of the shared library that defines `symbol` in this process (dlsym in the global
/// scope, then dladdr) into `buffer` (NUL-terminated, at most `size` bytes). Returns 0, or -1 when the
/// symbol is not found, lives in the main executable, or the path does not fit.
int memharness_library_path_of_symbol(const char *symbol, char *buffer, unsigned long size);

#endif
