/*
 * elfread.h - how a file is opened with libelf: the one reader for every
 * ELF file stackfold reads (symbol index, debug files, the unwinder's CFI).
 *
 * libelf maps files; a mapped file that shrinks under the mapping
 * (truncated by whoever may write it) kills the reader with SIGBUS at its
 * next touch of the lost pages.  A file that only root can write is
 * mapped (ELF_C_READ_MMAP_PRIVATE: the fast path, the system's
 * libraries); any other is read with pread into memory (ELF_C_READ), so
 * its truncation is a short read, an error.  Nothing prints.
 */
#ifndef SF_ELFREAD_H
#define SF_ELFREAD_H

#include <libelf.h>

/* How to elf_begin() the file fd reads (fstat of fd). */
Elf_Cmd elf_read_cmd(int fd);

#endif
