/*
 * io_faults.h - I/O fault injection, for tests (tests/unit/fault.h builds loops on it).
 * Not installed and not exported: tests link libfloe.a. The hooks belong to a context (a
 * test injects into the context it passes in); the FileIO backends and the line reader
 * ask floe_io_fault_hit before each system call of a kind.
 */
#ifndef FLOE_IO_FAULTS_H
#define FLOE_IO_FAULTS_H

#include <stdint.h>

#include "floe/io.h"

/* Per context (NULL: the default context) and thread-safe; costs two relaxed atomics per
 * system call when unused. */
typedef enum floe_io_fault_kind {
    FLOE_IO_FAULT_OPEN = 0, /* opening an input; creating an output's temporary file */
    FLOE_IO_FAULT_READ,     /* each read(2)/pread(2) of an input */
    FLOE_IO_FAULT_WRITE,    /* each write(2) of an output */
    FLOE_IO_FAULT_FSYNC,    /* fsync of an output and of its directory */
    FLOE_IO_FAULT_RENAME,   /* publishing an output: rename(2), or link(2) for no_overwrite */
    FLOE_IO_FAULT_NKINDS
} floe_io_fault_kind;

/* From now on the nth operation of kind (1-based) and every later one fail with errnum
 * (EIO when 0; not EINTR), like a disk that filled up or broke. nth = 0 disables the
 * kind. Resets the kind's counter. */
void floe_io_fault_inject(floe_io *io, floe_io_fault_kind kind, uint64_t nth, int errnum);
/* The same, but only the nth operation fails (a refusal, not a broken disk). */
void floe_io_fault_inject_once(floe_io *io, floe_io_fault_kind kind, uint64_t nth, int errnum);
/* Disable every kind and reset every counter. */
void floe_io_fault_clear(floe_io *io);
/* Operations of kind seen since its last inject or clear (failed ones included). */
uint64_t floe_io_fault_count(floe_io *io, floe_io_fault_kind kind);
/* For code that makes its own system calls (the FileIO backends, the line reader): count
 * one operation of kind; returns the errno to fail it with, or 0 to go ahead. */
int floe_io_fault_hit(floe_io *io, floe_io_fault_kind kind);

#endif
