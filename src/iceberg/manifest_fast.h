/*
 * manifest_fast.h - the streaming manifest-entry decoder of manifest_fast.c, shared with
 * manifest_read.c (and the differential test). Private to src/iceberg.
 *
 * The generic path decodes each manifest_entry record into an Avro value tree and then
 * picks it apart by field id; this path compiles the writer's schema once per file into a
 * small program (one op per writer field) and decodes the record's bytes straight into
 * slots and floe_data_file arrays, skipping fields nobody reads, with no value tree.
 * manifest_read.c turns the slots into an entry with the same checks for both paths.
 */
#ifndef FLOE_ICEBERG_MANIFEST_FAST_H
#define FLOE_ICEBERG_MANIFEST_FAST_H

#include "manifest_internal.h"

/* manifest_entry fields by slot (writer index per slot in floe_manifest_reader.eidx) */
enum { E_STATUS, E_SNAP, E_SEQ, E_FSEQ, E_DF, E_N };
/* data_file fields by slot (didx) */
enum { D_CONTENT, D_PATH, D_FORMAT, D_PART, D_RECS, D_SIZE, D_CSIZES, D_VCOUNTS, D_NCOUNTS,
       D_NANS, D_LOWER, D_UPPER, D_KEY, D_SPLITS, D_EQIDS, D_SORT, D_FRID, D_REF, D_COFF,
       D_CSIZE, D_N };

/* One decoded record. Scalar slots point into sv/dv (NULL: the writer lacks the field);
 * strings are NUL-terminated copies in the arena, bytes borrow the Avro block. The metric
 * maps, split offsets and equality ids are decoded straight into file (their dslot stays
 * NULL); partition values into part[i] (NULL: the writer lacks spec field i). eslot[E_DF]
 * is a record marker (or the null the writer put there): data_file is decoded in place. */
typedef struct floe_mf_slots {
    floe_avro_value ev[E_N];       /* storage behind eslot */
    floe_avro_value dv[D_N];       /* storage behind dslot */
    const floe_avro_value *eslot[E_N];
    const floe_avro_value *dslot[D_N];
    const floe_avro_value **part; /* npart */
    bool part_missing;             /* spec fields, but no partition record (or a null) */
    const floe_avro_value *part_rec; /* the null in its place, or NULL when absent */
    floe_data_file file;
    floe_buf items;                /* scratch: a map's or list's items while they are read
                                    * (floe_buf_init before the first decode; the owner
                                    * frees it) */
} floe_mf_slots;

/* manifest_file fields of a manifest list by slot (writer index per slot: lidx), and the
 * field_summary fields of its partitions (sidx) */
enum { L_PATH, L_LEN, L_SPEC, L_CONTENT, L_SEQ, L_MINSEQ, L_SNAP, L_AF, L_EF, L_DF, L_AR, L_ER,
       L_DR, L_PARTS, L_KEY, L_FRID, L_N };
enum { S_NULL, S_NAN, S_LO, S_HI, S_N };

/* One field_summary record as decoded: slot[k] NULL when the writer lacks field k. */
typedef struct floe_ml_summary {
    floe_avro_value v[S_N];
    const floe_avro_value *slot[S_N];
} floe_ml_summary;

/* One manifest_file record as decoded. Scalar slots point into v (NULL: the writer lacks
 * the field); strings are NUL-terminated copies in the arena, bytes borrow the Avro block.
 * slot[L_PARTS] is an array marker (or the null the writer put there) and the summaries
 * are in sums[0..nsums): scratch reused across records (the owner frees sums). */
typedef struct floe_ml_slots {
    floe_avro_value v[L_N];
    const floe_avro_value *slot[L_N];
    floe_ml_summary *sums;
    size_t nsums, sumcap;
} floe_ml_slots;

typedef struct floe_ml_program floe_ml_program;

/* Compile the writer's manifest_file schema of a manifest list (lidx, sidx: writer index
 * per slot, -1 absent). 0 with *out set (free with floe_ml_program_free), 1 when the
 * schema has a shape only the generic path decodes (a complex type where a scalar
 * belongs, partitions not an array of records), or FLOE_ENOMEM. */
int floe_ml_program_compile(const floe_avro_node *root, const int *lidx, const int *sidx,
                            floe_ml_program **out, floe_error *err);
void floe_ml_program_free(floe_ml_program *p); /* accepts NULL */
/* Decode one manifest_file record from c into *s. Strings go to a. FLOE_ECORRUPT naming
 * the field, FLOE_ENOMEM. */
int floe_ml_program_decode(const floe_ml_program *p, floe_avro_cursor *c, floe_arena *a,
                           floe_ml_slots *s, floe_error *err);

/* Differential check of the two manifest-list decoders over one list in memory (tests):
 * mismatch is set when the generic path reads the list and the streaming path does not
 * read the same one (every manifest_file field compared), or refuses it. */
typedef struct floe_ml_diff {
    bool fast;         /* the streaming path was used */
    int generic_rc;    /* 0 read, negative error */
    int fast_rc;
    size_t files;      /* manifest_file records compared */
    bool mismatch;
    char why[512];
} floe_ml_diff;
int floe_ml_differential(const void *p, size_t n, floe_ml_diff *out);

typedef struct floe_mf_program floe_mf_program;

/* Compile the writer's manifest_entry schema. eidx/didx: writer field index per slot (-1
 * absent), pidx: writer index in the partition record per spec field (npart of them).
 * Returns 0 with *out set (owned; free with floe_mf_program_free), 1 when the schema has
 * a shape only the generic path decodes (e.g. metric maps as Avro maps, a nullable
 * data_file), or FLOE_ENOMEM. */
int floe_mf_program_compile(const floe_avro_node *root, const int *eidx, const int *didx,
                            const int *pidx, size_t npart, floe_mf_program **out,
                            floe_error *err);
void floe_mf_program_free(floe_mf_program *p); /* accepts NULL */

/* Decode one manifest_entry record from c into *s (reset first). Allocations go to a
 * (strings, metric arrays). FLOE_ECORRUPT naming the field, FLOE_ENOMEM. */
int floe_mf_program_decode(const floe_mf_program *p, floe_avro_cursor *c, floe_arena *a,
                           floe_mf_slots *s, floe_error *err);

/* For tests and the benchmark: which decoder a manifest reader uses. The environment
 * floe_manifest_set_generic_decoder(true) (the floe command sets it from
 * FLOE_MANIFEST_DECODER=generic) makes every reader use the generic one. */
typedef struct floe_manifest_reader floe_manifest_reader;
bool floe_mf_reader_is_fast(const floe_manifest_reader *r);
/* Switch to the generic decoder; only before the first entry. */
void floe_mf_reader_force_generic(floe_manifest_reader *r);

/* Compare two entries field by field (values, not pointers): 0 when equal, else 1 with
 * the first differing field named in why[0..n). For the differential test and fuzzer. */
int floe_mf_entry_diff(const floe_manifest_entry *a, const floe_manifest_entry *b, char *why,
                       size_t n);

/* Differential check of the two decoders over one manifest in memory (tests, fuzzing):
 * both read p[0..n) in lock step. mismatch is set when they disagree where they must
 * agree: an entry both return differs, or one returns an entry or the end where the other
 * returns the end or an error, except that the streaming path may accept entries the
 * generic one refuses (it skips fields nobody reads instead of decoding them). */
typedef struct floe_mf_diff {
    bool opened;       /* the generic path opened it as a manifest */
    bool fast;         /* the streaming path was used */
    int64_t entries;   /* entries both returned and compared */
    int generic_rc;    /* how each path ended: 0 end, negative error */
    int fast_rc;
    bool mismatch;
    char why[512];
} floe_mf_diff;
int floe_mf_differential(const void *p, size_t n, floe_mf_diff *out);

#endif
