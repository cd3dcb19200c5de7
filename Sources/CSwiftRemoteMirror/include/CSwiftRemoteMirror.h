// The parts of the Swift toolchain's libswiftRemoteMirror.so that memharness uses, declared here because the
// toolchain does not install the header (swiftlang/swift: include/swift/SwiftRemoteMirror/SwiftRemoteMirror.h,
// MemoryReaderInterface.h, SwiftRemoteMirrorTypes.h). Only types: every function is looked up with dlsym at run time
// (SwiftReflection's RemoteMirrorLibrary), so the package builds and runs where the library is absent.
#ifndef CSWIFTREMOTEMIRROR_H
#define CSWIFTREMOTEMIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t mh_rm_addr;
typedef uint64_t mh_rm_typeref;
typedef struct mh_rm_context *mh_rm_context_ref;

// The reader callbacks: reader_context is the pointer given when the context was made.
typedef void (*mh_rm_free_bytes)(void *reader_context, const void *bytes, void *context);
typedef const void *(*mh_rm_read_bytes)(void *reader_context, mh_rm_addr address, uint64_t size, void **free_context);
typedef uint64_t (*mh_rm_string_length)(void *reader_context, mh_rm_addr address);
typedef mh_rm_addr (*mh_rm_symbol_address)(void *reader_context, const char *name, uint64_t length);
// Queries 0 (pointer size, a uint8_t) and 1 (size_t's size, a uint8_t) are answered; any other gets 0 (the library's
// default for this platform: no Objective-C interop, 4 KiB below which no pointer is valid).
typedef int (*mh_rm_query_data_layout)(void *reader_context, int query, void *in_buffer, void *out_buffer);

// swift_typeinfo_t: Kind is a swift_layout_kind_t, an enum whose numbering has changed between toolchains, so it is
// not interpreted here (a field's ownership is read from its type's name instead).
typedef struct {
    unsigned Kind;
    unsigned Size;
    unsigned Alignment;
    unsigned Stride;
    unsigned NumFields;
} mh_rm_typeinfo;

// swift_childinfo_t. Name is owned by the context.
typedef struct {
    const char *Name;
    unsigned Offset;
    unsigned Kind;
    mh_rm_typeref TR;
} mh_rm_childinfo;

// swift_reflection_section_t and swift_remote_reflection_section_t, paired in swift_reflection_section_mapping_t:
// where a section's bytes are in this process (local) and where the target has it (remote).
typedef struct {
    void *Begin;
    void *End;
} mh_rm_local_section;

typedef struct {
    uint64_t StartAddress;
    uint64_t Size;
} mh_rm_remote_section;

typedef struct {
    mh_rm_local_section local_section;
    mh_rm_remote_section remote_section;
} mh_rm_section_mapping;

// swift_reflection_mapping_info_t: one image's reflection sections (swift5_fieldmd, swift5_assocty, swift5_builtin,
// swift5_capture, swift5_typeref, swift5_reflstr).
typedef struct {
    mh_rm_section_mapping field;
    mh_rm_section_mapping associated_types;
    mh_rm_section_mapping builtin_types;
    mh_rm_section_mapping capture;
    mh_rm_section_mapping type_references;
    mh_rm_section_mapping reflection_strings;
} mh_rm_mapping_info;

typedef mh_rm_context_ref (*mh_rm_create_context)(void *reader_context, mh_rm_query_data_layout layout,
                                                   mh_rm_free_bytes free_bytes, mh_rm_read_bytes read_bytes,
                                                   mh_rm_string_length string_length,
                                                   mh_rm_symbol_address symbol_address);
typedef void (*mh_rm_destroy_context)(mh_rm_context_ref context);
typedef void (*mh_rm_add_mapping_info)(mh_rm_context_ref context, mh_rm_mapping_info info);
typedef mh_rm_typeref (*mh_rm_typeref_for_metadata)(mh_rm_context_ref context, uintptr_t metadata);
typedef char *(*mh_rm_copy_name_for_typeref)(mh_rm_context_ref context, mh_rm_typeref typeref, bool mangled);
typedef mh_rm_typeinfo (*mh_rm_info_for)(mh_rm_context_ref context, uintptr_t address);
typedef mh_rm_childinfo (*mh_rm_child_of)(mh_rm_context_ref context, uintptr_t address, unsigned index);

#endif
