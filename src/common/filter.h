/*
 * common/filter.h - the --where language: one parser for every filter floe takes (floe cat's
 * Parquet reader filter, floe scan, rewrite's --where, health's recommendations).
 *
 * Grammar:
 *   expr := or ; or := and ("OR" and)* ; and := not ("AND" not)*
 *   not  := "NOT" not | "(" expr ")" | cmp
 *   cmp  := column op literal | column ["NOT"] "IN" "(" literal, ... ")"
 *         | column "IS" ["NOT"] "NULL" | column ["NOT"] "LIKE" 'prefix%'
 *   op   := = | == | != | <> | < | <= | > | >=
 *   column  := name ("." name)*: the names of its struct fields from the top level down
 *              (the table scan reads names past a variant field as object keys inside it)
 *   name    := letters, digits, '_' and bytes past ASCII, or "double-quoted" or
 *              `backquoted` (any text but NUL; "" and `` escape the quote): a quoted name
 *              is one name whatever it holds, so `a.b` is a column named a.b and a.b is
 *              field b of struct a
 *   literal := 'string' ('' is a quote) | NULL | any other run of characters up to a
 *              space, a comma or a parenthesis (numbers, true, false, NaN, ...)
 * Keywords are case-insensitive. Nesting deeper than FLOE_FILTER_MAX_DEPTH is refused.
 *
 * The parser knows no schema: a predicate names its column and keeps its literals as text.
 * A caller binds the tree to its own schema and value domain (the Parquet reader to the
 * file's leaves, the table scan to the table schema), typing each literal by its column.
 *
 * NOT is pushed down to the predicates while parsing (negation normal form: De Morgan on
 * AND / OR, each operator replaced by its complement: < by >=, = by !=, IN by NOT IN,
 * IS NULL by IS NOT NULL, LIKE by NOT LIKE), so the tree has no NOT nodes. A predicate
 * records whether it was negated an odd number of times (`negated`): a value domain in
 * which NaN compares false with every operator but != (the table scan's, IEEE) needs it,
 * since NOT (x < 5) holds for NaN and x >= 5 does not.
 */
#ifndef FLOE_COMMON_FILTER_H
#define FLOE_COMMON_FILTER_H

#include "floe/common.h"

#define FLOE_FILTER_MAX_DEPTH 200
#define FLOE_FILTER_MAX_PATH 64 /* names in one column path */

typedef enum floe_filter_kind {
    FLOE_FILTER_AND,
    FLOE_FILTER_OR,
    FLOE_FILTER_PRED,
} floe_filter_kind;

/* The comparisons come first, in complementary pairs' order used by floe_filter_negate. */
typedef enum floe_filter_op {
    FLOE_FILTER_EQ,
    FLOE_FILTER_NE,
    FLOE_FILTER_LT,
    FLOE_FILTER_LE,
    FLOE_FILTER_GT,
    FLOE_FILTER_GE,
    FLOE_FILTER_IN,       /* lits[0..nlits) */
    FLOE_FILTER_NOT_IN,
    FLOE_FILTER_IS_NULL,  /* no literal */
    FLOE_FILTER_NOT_NULL,
    FLOE_FILTER_LIKE,     /* one string literal: the prefix, without its '%' */
    FLOE_FILTER_NOT_LIKE,
} floe_filter_op;

typedef enum floe_filter_lit_kind {
    FLOE_FILTER_LIT_STRING, /* 'quoted': text is unescaped */
    FLOE_FILTER_LIT_NULL,   /* the word NULL */
    FLOE_FILTER_LIT_WORD,   /* anything else, as written: 42, -1.5e3, true, NaN */
} floe_filter_lit_kind;

typedef struct floe_filter_lit {
    floe_filter_lit_kind kind;
    const char *text; /* NUL-terminated, n bytes (a string may hold NULs) */
    size_t n;
    size_t offset;    /* where it starts in the filter text */
} floe_filter_lit;

typedef struct floe_filter floe_filter;
struct floe_filter {
    floe_filter_kind kind;
    floe_filter *a, *b;        /* AND / OR */
    floe_filter_op op;         /* PRED */
    const char *column;        /* PRED: the column as written (quotes and all), for messages */
    const char *const *path;   /* PRED: its names from the top level down, unquoted */
    size_t npath;
    size_t column_offset;
    floe_filter_lit *lits;     /* PRED: 1 for comparisons and LIKE, n >= 1 for [NOT] IN */
    size_t nlits;
    bool negated;              /* PRED: under an odd number of NOTs in the text */
    const char *text;          /* the whole filter text, for error messages */
};

/* Parse text into a NOT-free tree. Everything, the tree and its strings, lives in arena
 * (text is referenced, not copied: keep it alive while the tree is used). Errors:
 * FLOE_EINVALID naming the offset, FLOE_ENOMEM. */
FLOE_NODISCARD int floe_filter_parse(const char *text, floe_arena *arena, floe_filter **out,
                                     floe_error *err);

/* Parse text, whole, as one column path of the grammar (names joined by dots, each bare or
 * quoted), except that a bare name runs to the next dot, so where nothing but a path is
 * written (floe table schema's PATH) a name holding a space or a dash needs no quotes;
 * one holding a dot does (`a.b`). The names, unquoted, from the top level down: *path
 * (*npath of them, at least one), in arena. FLOE_EINVALID naming the offset ("column
 * path: expected a column name at offset 2 in \"a..b\""), FLOE_ENOMEM. */
FLOE_NODISCARD int floe_filter_parse_path(const char *text, floe_arena *arena,
                                          const char *const **path, size_t *npath,
                                          floe_error *err);

/* An error about the predicate node at byte offset of its filter text:
 * "filter: <message> at offset N in \"<text>\"". Returns code. */
int floe_filter_fail(const floe_filter *node, size_t offset, floe_error *err, int code,
                     const char *fmt, ...) FLOE_PRINTF(5, 6);

#endif
