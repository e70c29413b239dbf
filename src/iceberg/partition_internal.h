/*
 * partition_internal.h - pieces shared by partition_spec.c and sort_order.c: schema
 * lookups that know about list/map nesting, and the lexer/term parser of the user forms
 * ("bucket(16, user_id)", "ts DESC NULLS LAST"). Private to src/iceberg.
 */
#ifndef FLOE_ICEBERG_PARTITION_INTERNAL_H
#define FLOE_ICEBERG_PARTITION_INTERNAL_H

#include "floe/partition.h"

/* Field with this id. *in_collection is set when it lies inside a list or map (then it
 * cannot be a partition or sort source). The full dotted name goes to name (may be
 * truncated to n). NULL if absent. */
const floe_field *floe_px_find_id(const floe_schema *s, int32_t id, bool *in_collection,
                                  char *name, size_t n);
/* Field by full dotted name through structs only; exact match first, then a unique
 * case-insensitive one. *ambiguous set when several case-insensitive matches exist. */
const floe_field *floe_px_find_name(const floe_schema *s, const char *name, size_t n,
                                    bool *ambiguous);

typedef enum floe_px_tok {
    FLOE_PX_END = 0,
    FLOE_PX_IDENT,  /* word or `quoted` / "quoted" name */
    FLOE_PX_INT,    /* optionally signed decimal integer */
    FLOE_PX_LPAREN,
    FLOE_PX_RPAREN,
    FLOE_PX_COMMA,
    FLOE_PX_BAD,
} floe_px_tok;

typedef struct floe_px_lexer {
    const char *s;
    size_t n, pos;
    floe_px_tok tok;
    const char *text; /* token text (for quoted identifiers: without the quotes) */
    size_t len;
    bool quoted;      /* identifier was quoted: never a keyword */
    int64_t ival;     /* FLOE_PX_INT value, saturated */
    bool overflow;    /* FLOE_PX_INT did not fit in int64 */
} floe_px_lexer;

void floe_px_init(floe_px_lexer *lx, const char *s);
void floe_px_next(floe_px_lexer *lx);
/* Copy the current identifier into out (doubled quotes undone, NUL-terminated); returns
 * its length, or (size_t)-1 when it does not fit in n - 1 bytes. */
size_t floe_px_ident(const floe_px_lexer *lx, char *out, size_t n);
/* current token is the unquoted keyword kw (case-insensitive) */
bool floe_px_is_kw(const floe_px_lexer *lx, const char *kw);

/* One parsed term: "col", "day(col)", "bucket(16, col)", "truncate(col, 4)". */
typedef struct floe_px_term {
    floe_transform transform;
    char fn[32];            /* the function name as written (for messages) */
    char col[512];          /* column name, quotes removed, NUL-terminated */
    size_t col_len;
    bool has_fn;            /* written with a function call */
    const char *src;        /* the whole input */
    size_t start, end;      /* byte range of the term in src */
} floe_px_term;

/* Parse a term at the lexer's current token; leaves the lexer on the token after it.
 * FLOE_EINVALID with a message naming the term on error. */
int floe_px_parse_term(floe_px_lexer *lx, floe_px_term *term, floe_error *err);
/* Resolve a term's column and check the transform accepts it. FLOE_ENOTFOUND for an
 * unknown column, FLOE_EINVALID otherwise. */
int floe_px_resolve(const floe_schema *s, const floe_px_term *term, const char *what,
                    const floe_field **out, floe_error *err);

/* Append a column or partition name as the user forms read it: plain words as they are,
 * anything else `back-quoted` with inner back quotes doubled. */
int floe_px_put_name(floe_buf *b, const char *s);

#endif
