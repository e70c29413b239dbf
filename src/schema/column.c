/*
 * column.c - column buffers (see floe/column.h for the layout).
 *
 * Invariants: nvalues <= nlevels; for BYTE_ARRAY, offsets[nvalues] == values_len;
 * def/rep are allocated only when max_def/max_rep are non-zero.
 */
#include "floe/column.h"
#include "schema/column_scatter.h"

#include <string.h>

void floe_colbuf_init(floe_colbuf *c, const floe_field *leaf) {
    memset(c, 0, sizeof *c);
    c->field = leaf;
    c->phys = leaf->phys;
    c->width = floe_phys_width(leaf->phys, leaf->type_length);
    c->max_def = leaf->def_level;
    c->max_rep = leaf->rep_level;
    floe_buf_init(&c->carry_bytes, 0);
}

void floe_colbuf_free(floe_colbuf *c) {
    floe_free(c->def);
    floe_free(c->rep);
    floe_free(c->values);
    floe_free(c->offsets);
    c->def = c->rep = NULL;
    c->values = NULL;
    c->offsets = NULL;
    c->nlevels = c->levels_cap = c->values_len = c->values_cap = c->offsets_cap = 0;
    c->nvalues = 0;
    floe_free(c->carry);
    c->carry = NULL;
    c->ncarry = c->carry_cap = 0;
    floe_buf_free(&c->carry_bytes);
}

void floe_colbuf_clear(floe_colbuf *c) {
    c->nlevels = 0;
    c->nvalues = 0;
    c->values_len = 0;
    if (c->offsets)
        c->offsets[0] = 0;
    c->ncarry = 0;
    floe_buf_reset(&c->carry_bytes);
}

size_t floe_colbuf_bytes(const floe_colbuf *c) {
    size_t lv = (c->max_def ? 2 : 0) + (c->max_rep ? 2 : 0);
    return c->values_len + c->nlevels * lv + (c->width == 0 ? c->nvalues * 4 : 0) +
           c->carry_bytes.len;
}

/* Past this many bytes a buffer grows by a quarter over what it needs instead of
 * doubling: still geometric, but a page of 1 GiB and a bit does not make it 4 GiB. */
#define GROW_DOUBLING_MAX ((size_t)256 << 20)

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return FLOE_ENOMEM;
        ncap *= 2;
    }
    if (ncap * elem > GROW_DOUBLING_MAX && need <= SIZE_MAX / elem / 5 * 4) {
        size_t quarter = need + need / 4;
        if (quarter < ncap)
            ncap = quarter > *cap + *cap / 4 ? quarter : *cap + *cap / 4;
    }
    void *np = floe_realloc(*p, ncap * elem);
    if (!np)
        return FLOE_ENOMEM;
    *p = np;
    *cap = ncap;
    return 0;
}

int floe_colbuf_reserve_levels(floe_colbuf *c, size_t extra) {
    size_t need = c->nlevels + extra;
    if (need <= c->levels_cap)
        return 0;
    size_t cap_def = c->levels_cap, cap_rep = c->levels_cap;
    int rc = 0;
    if (c->max_def > 0 && (rc = grow((void **)&c->def, &cap_def, need, sizeof(int16_t))) < 0)
        return rc;
    if (c->max_rep > 0 && (rc = grow((void **)&c->rep, &cap_rep, need, sizeof(int16_t))) < 0)
        return rc;
    /* no level arrays (a required flat column): the capacity is only a count, grown as
     * the arrays would be, or every push past it would come here */
    size_t ncap = c->max_def > 0 ? cap_def : c->max_rep > 0 ? cap_rep
                  : need > 2 * c->levels_cap ? (need > 64 ? need : 64) : 2 * c->levels_cap;
    if (c->max_def > 0 && c->max_rep > 0 && cap_def != cap_rep) {
        /* keep both arrays the same capacity */
        size_t m = cap_def > cap_rep ? cap_def : cap_rep;
        if ((rc = grow((void **)&c->def, &cap_def, m, sizeof(int16_t))) < 0 ||
            (rc = grow((void **)&c->rep, &cap_rep, m, sizeof(int16_t))) < 0)
            return rc;
        ncap = m;
    }
    c->levels_cap = ncap;
    return 0;
}

int floe_colbuf_reserve_values(floe_colbuf *c, size_t extra_values, size_t extra_bytes) {
    int rc;
    if (c->width == 0) {
        if (!c->offsets || c->offsets_cap < c->nvalues + extra_values + 1) {
            bool fresh = c->offsets == NULL;
            if ((rc = grow((void **)&c->offsets, &c->offsets_cap, c->nvalues + extra_values + 1,
                           sizeof(uint32_t))) < 0)
                return rc;
            if (fresh)
                c->offsets[0] = 0;
        }
    } else {
        extra_bytes = extra_values * (size_t)c->width;
    }
    if (c->values_len + extra_bytes > c->values_cap)
        return grow((void **)&c->values, &c->values_cap, c->values_len + extra_bytes, 1);
    return 0;
}

int floe_colbuf_push_null(floe_colbuf *c, int16_t def, int16_t rep) {
    if (c->nlevels >= c->levels_cap) {
        int rc = floe_colbuf_reserve_levels(c, 1);
        if (rc < 0)
            return rc;
    }
    if (c->max_def > 0)
        c->def[c->nlevels] = def;
    if (c->max_rep > 0)
        c->rep[c->nlevels] = rep;
    c->nlevels++;
    return 0;
}

int floe_colbuf_push_value(floe_colbuf *c, int16_t rep, const void *p, size_t n) {
    int rc;
    if (c->nlevels >= c->levels_cap && (rc = floe_colbuf_reserve_levels(c, 1)) < 0)
        return rc;
    if (c->width == 0) {
        if (n > UINT32_MAX - c->values_len)
            return FLOE_ELIMIT;
        if ((rc = floe_colbuf_reserve_values(c, 1, n)) < 0)
            return rc;
        if (n)
            memcpy(c->values + c->values_len, p, n);
        c->values_len += n;
        c->offsets[c->nvalues + 1] = (uint32_t)c->values_len;
    } else {
        if (c->values_len + (size_t)c->width > c->values_cap &&
            (rc = floe_colbuf_reserve_values(c, 1, 0)) < 0)
            return rc;
        memcpy(c->values + c->values_len, p, (size_t)c->width);
        c->values_len += (size_t)c->width;
    }
    floe_colbuf_push_level(c, rep);
    return 0;
}

void floe_colbuf_truncate(floe_colbuf *c, size_t nlevels, size_t nvalues) {
    if (nlevels < c->nlevels)
        c->nlevels = nlevels;
    if (nvalues < c->nvalues) {
        c->nvalues = nvalues;
        c->values_len = c->width == 0 ? c->offsets[nvalues] : nvalues * (size_t)c->width;
    }
    while (c->ncarry > 0) {
        const floe_colbuf_page *pg = &c->carry[c->ncarry - 1];
        if (pg->level0 + pg->nlevels <= c->nlevels && pg->value0 + pg->nvalues <= c->nvalues)
            break;
        c->carry_bytes.len = pg->at;
        c->ncarry--;
    }
}

int floe_colbuf_carry_add(floe_colbuf *c, uint32_t nlevels, uint32_t nvalues, uint32_t ulen,
                          const uint8_t *body, uint32_t clen, int32_t codec) {
    if (nlevels > c->nlevels || nvalues > c->nvalues)
        return FLOE_EINVALID;
    int rc = grow((void **)&c->carry, &c->carry_cap, c->ncarry + 1, sizeof *c->carry);
    if (rc < 0)
        return rc;
    size_t at = c->carry_bytes.len;
    if ((rc = floe_buf_append(&c->carry_bytes, body, clen)) < 0)
        return rc;
    c->carry[c->ncarry++] = (floe_colbuf_page){
        .level0 = c->nlevels - nlevels,
        .value0 = c->nvalues - nvalues,
        .nlevels = nlevels,
        .nvalues = nvalues,
        .ulen = ulen,
        .clen = clen,
        .at = at,
        .codec = codec,
    };
    return 0;
}

int floe_batch_init(floe_batch *b, const floe_schema *s) {
    memset(b, 0, sizeof *b);
    b->schema = s;
    b->cols = floe_calloc(s->nleaves ? s->nleaves : 1, sizeof *b->cols);
    if (!b->cols)
        return FLOE_ENOMEM;
    b->ncols = s->nleaves;
    for (size_t i = 0; i < s->nleaves; i++)
        floe_colbuf_init(&b->cols[i], s->leaves[i]);
    return 0;
}

void floe_batch_free(floe_batch *b) {
    if (!b->cols)
        return;
    for (size_t i = 0; i < b->ncols; i++)
        floe_colbuf_free(&b->cols[i]);
    floe_free(b->cols);
    b->cols = NULL;
    b->ncols = 0;
    b->nrows = 0;
}

void floe_batch_clear(floe_batch *b) {
    for (size_t i = 0; i < b->ncols; i++)
        floe_colbuf_clear(&b->cols[i]);
    b->nrows = 0;
}

size_t floe_batch_bytes(const floe_batch *b) {
    size_t t = 0;
    for (size_t i = 0; i < b->ncols; i++)
        t += floe_colbuf_bytes(&b->cols[i]);
    return t;
}

/* ---- moving rows between batches ---------------------------------------------------- */

int floe_batch_cursor_init(floe_batch_cursor *c, const floe_batch *b) {
    c->ncols = b->ncols;
    c->row = 0;
    c->level = floe_calloc(b->ncols ? b->ncols : 1, sizeof *c->level);
    c->value = floe_calloc(b->ncols ? b->ncols : 1, sizeof *c->value);
    if (!c->level || !c->value) {
        floe_batch_cursor_free(c);
        return FLOE_ENOMEM;
    }
    return 0;
}

void floe_batch_cursor_free(floe_batch_cursor *c) {
    floe_free(c->level);
    floe_free(c->value);
    c->level = c->value = NULL;
}

/* Level index where the row after `nrows` rows from level l0 starts. Rows start at
 * repetition level 0; the first level at l0 starts the first row. */
static size_t skip_rows(const floe_colbuf *c, size_t l0, size_t nrows) {
    if (c->max_rep == 0)
        return l0 + nrows;
    size_t l = l0, seen = 0;
    while (l < c->nlevels) {
        if (c->rep[l] == 0) {
            if (seen == nrows)
                break;
            seen++;
        }
        l++;
    }
    return l;
}

static size_t count_values(const floe_colbuf *c, size_t l0, size_t l1) {
    if (c->max_def == 0)
        return l1 - l0;
    size_t n = 0;
    const int16_t *d = c->def;
    int16_t m = c->max_def;
    for (size_t l = l0; l < l1; l++)
        n += d[l] == m;
    return n;
}

int floe_batch_take_rows(floe_batch *dst, const floe_batch *src, floe_batch_cursor *cur,
                         size_t nrows) {
    if (nrows == 0)
        return 0;
    if (cur->row + nrows > src->nrows)
        return FLOE_EINVALID;
    for (size_t i = 0; i < src->ncols; i++) {
        const floe_colbuf *s = &src->cols[i];
        size_t l0 = cur->level[i], v0 = cur->value[i];
        size_t l1 = skip_rows(s, l0, nrows);
        size_t nv = count_values(s, l0, l1);
        if (dst) {
            floe_colbuf *d = &dst->cols[i];
            size_t nl = l1 - l0;
            int rc = floe_colbuf_reserve_levels(d, nl);
            if (rc < 0)
                return rc;
            if (s->max_def > 0)
                memcpy(d->def + d->nlevels, s->def + l0, nl * sizeof(int16_t));
            if (s->max_rep > 0)
                memcpy(d->rep + d->nlevels, s->rep + l0, nl * sizeof(int16_t));
            d->nlevels += nl;
            if (nv == 0) {
                /* only nulls: no values, and a BYTE_ARRAY column may have no offsets yet */
            } else if (s->width == 0) {
                size_t b0 = s->offsets[v0], b1 = s->offsets[v0 + nv];
                if (b1 - b0 > UINT32_MAX - d->values_len)
                    return FLOE_ELIMIT;
                if ((rc = floe_colbuf_reserve_values(d, nv, b1 - b0)) < 0)
                    return rc;
                if (b1 > b0)
                    memcpy(d->values + d->values_len, s->values + b0, b1 - b0);
                uint32_t delta = (uint32_t)d->values_len - (uint32_t)b0;
                for (size_t k = 1; k <= nv; k++)
                    d->offsets[d->nvalues + k] = s->offsets[v0 + k] + delta;
                d->values_len += b1 - b0;
            } else {
                if ((rc = floe_colbuf_reserve_values(d, nv, 0)) < 0)
                    return rc;
                size_t w = (size_t)s->width;
                if (nv)
                    memcpy(d->values + d->values_len, s->values + v0 * w, nv * w);
                d->values_len += nv * w;
            }
            d->nvalues += nv;
        }
        cur->level[i] = l1;
        cur->value[i] = v0 + nv;
    }
    cur->row += nrows;
    if (dst)
        dst->nrows += nrows;
    return 0;
}

/* Append the values [a, b) of s to d (their levels are d's already). */
static void take_values(floe_colbuf *d, const floe_colbuf *s, size_t a, size_t b) {
    if (b == a)
        return;
    if (s->width == 0) {
        size_t b0 = s->offsets[a], b1 = s->offsets[b];
        if (b1 > b0) /* values of '' only: no value bytes, maybe no buffer */
            memcpy(d->values + d->values_len, s->values + b0, b1 - b0);
        uint32_t delta = (uint32_t)d->values_len - (uint32_t)b0;
        uint32_t *o = d->offsets + d->nvalues;
        for (size_t k = 1; k <= b - a; k++)
            o[k] = s->offsets[a + k] + delta;
        d->values_len += b1 - b0;
    } else {
        size_t w = (size_t)s->width;
        memcpy(d->values + d->values_len, s->values + a * w, (b - a) * w);
        d->values_len += (b - a) * w;
    }
    d->nvalues += b - a;
}

/* floe_batch_take_kept for a column without repetition (a slot is a row), given the runs
 * of kept rows [run[2k], run[2k+1]) and their nkept rows: a column without nulls copies
 * each run's levels and values at once; one with nulls goes row by row, copying the kept
 * values a run of consecutive ones at a time. */
static int take_kept_flat(floe_colbuf *d, const floe_colbuf *s, const uint8_t *keep,
                          size_t nrows, const size_t *run, size_t nruns, size_t nkept) {
    const int16_t *def = s->max_def > 0 ? s->def : NULL;
    const int16_t m = s->max_def;
    bool dense = s->nvalues == nrows; /* value k is row k's */
    size_t nv = 0, nb = 0, vi = 0;
    if (dense) {
        nv = nkept;
        for (size_t k = 0; s->width == 0 && k < nruns; k++)
            nb += s->offsets[run[2 * k + 1]] - s->offsets[run[2 * k]];
    } else {
        for (size_t r = 0; r < nrows; r++) {
            bool present = !def || def[r] == m;
            if (keep[r] && present) {
                nv++;
                if (s->width == 0)
                    nb += s->offsets[vi + 1] - s->offsets[vi];
            }
            vi += present;
        }
    }
    if (s->width == 0 && nb > UINT32_MAX - d->values_len)
        return FLOE_ELIMIT;
    int rc = floe_colbuf_reserve_levels(d, nkept);
    if (rc == 0 && nv)
        rc = floe_colbuf_reserve_values(d, nv, nb);
    if (rc < 0)
        return rc;
    if (dense) {
        for (size_t k = 0; k < nruns; k++) {
            size_t a = run[2 * k], b = run[2 * k + 1];
            if (def)
                memcpy(d->def + d->nlevels, def + a, (b - a) * sizeof *def);
            d->nlevels += b - a;
            take_values(d, s, a, b);
        }
        return 0;
    }
    int16_t *dd = def ? d->def + d->nlevels : NULL;
    size_t at = 0;
    bool in_run = false;
    vi = 0;
    for (size_t r = 0; r < nrows; r++) {
        bool present = !def || def[r] == m;
        if (keep[r]) {
            if (dd)
                *dd++ = def[r];
            if (present && !in_run) {
                at = vi;
                in_run = true;
            }
        } else if (present && in_run) {
            take_values(d, s, at, vi);
            in_run = false;
        }
        vi += present;
    }
    if (in_run)
        take_values(d, s, at, vi);
    d->nlevels += nkept;
    return 0;
}

int floe_batch_take_kept(floe_batch *dst, const floe_batch *src, const uint8_t *keep) {
    size_t nrows = src->nrows;
    bool flat = true;
    for (size_t i = 0; i < src->ncols; i++)
        flat = flat && src->cols[i].max_rep == 0 && src->cols[i].nlevels == nrows;
    if (flat) {
        size_t *run = floe_malloc((nrows / 2 + 1) * 2 * sizeof *run);
        if (!run)
            return FLOE_ENOMEM;
        size_t nruns = 0, nkept = 0;
        for (size_t r = 0; r < nrows;) {
            while (r < nrows && !keep[r])
                r++;
            if (r == nrows)
                break;
            size_t e = r + 1;
            while (e < nrows && keep[e])
                e++;
            run[2 * nruns] = r;
            run[2 * nruns + 1] = e;
            nruns++;
            nkept += e - r;
            r = e;
        }
        int rc = 0;
        for (size_t i = 0; i < src->ncols && rc == 0; i++)
            rc = take_kept_flat(&dst->cols[i], &src->cols[i], keep, nrows, run, nruns, nkept);
        floe_free(run);
        if (rc == 0)
            dst->nrows += nkept;
        return rc;
    }
    /* repeated columns: runs of kept and dropped rows through a cursor */
    floe_batch_cursor cur;
    if (floe_batch_cursor_init(&cur, src) < 0)
        return FLOE_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < nrows && rc == 0;) {
        size_t j = i;
        while (j < nrows && (keep[j] != 0) == (keep[i] != 0))
            j++;
        rc = floe_batch_take_rows(keep[i] ? dst : NULL, src, &cur, j - i);
        i = j;
    }
    floe_batch_cursor_free(&cur);
    return rc;
}

/* Level index after the row starting at level l of c (rows start at repetition level 0). */
static size_t row_end(const floe_colbuf *c, size_t l) {
    l++;
    if (c->max_rep > 0)
        while (l < c->nlevels && c->rep[l] != 0)
            l++;
    return l;
}

int floe_batch_scatter_rows(floe_batch *const *dst, size_t ndst, const floe_batch *src,
                            const uint32_t *part) {
    size_t nrows = src->nrows;
    for (size_t r = 0; r < nrows; r++)
        if (part[r] >= ndst)
            return FLOE_EINVALID;
    if (nrows == 0 || ndst == 0)
        return 0;
    size_t *cnt = floe_calloc(ndst * 3, sizeof *cnt); /* levels, values, bytes per dst */
    if (!cnt)
        return FLOE_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < src->ncols && rc == 0; i++) {
        const floe_colbuf *s = &src->cols[i];
        size_t *nl = cnt, *nv = cnt + ndst, *nb = cnt + 2 * ndst;
        memset(cnt, 0, ndst * 3 * sizeof *cnt);
        bool flat = s->max_rep == 0, dense = s->max_def == 0;
        /* pass 1: what each destination takes */
        for (size_t r = 0, l = 0, v = 0; r < nrows; r++) {
            size_t l1 = flat ? l + 1 : row_end(s, l), n = dense ? l1 - l : 0;
            for (size_t x = l; x < l1 && !dense; x++)
                n += s->def[x] == s->max_def;
            uint32_t d = part[r];
            nl[d] += l1 - l;
            nv[d] += n;
            if (n && s->width == 0)
                nb[d] += s->offsets[v + n] - s->offsets[v];
            l = l1;
            v += n;
        }
        for (size_t d = 0; d < ndst && rc == 0; d++) {
            floe_colbuf *c = &dst[d]->cols[i];
            if (nb[d] > UINT32_MAX - c->values_len)
                rc = FLOE_ELIMIT;
            else if (nl[d] && (rc = floe_colbuf_reserve_levels(c, nl[d])) == 0 && nv[d])
                rc = floe_colbuf_reserve_values(c, nv[d], nb[d]);
        }
        if (rc < 0)
            break;
        /* pass 2: the copies */
        size_t w = (size_t)s->width;
        for (size_t r = 0, l = 0, v = 0; r < nrows; r++) {
            size_t l1 = flat ? l + 1 : row_end(s, l), n = dense ? l1 - l : 0;
            floe_colbuf *c = &dst[part[r]]->cols[i];
            if (!dense) {
                for (size_t x = l; x < l1; x++) {
                    c->def[c->nlevels + x - l] = s->def[x];
                    n += s->def[x] == s->max_def;
                }
            }
            if (!flat)
                memcpy(c->rep + c->nlevels, s->rep + l, (l1 - l) * sizeof(int16_t));
            c->nlevels += l1 - l;
            if (n && w == 0) {
                uint32_t b0 = s->offsets[v], b1 = s->offsets[v + n];
                if (b1 > b0) /* only '' values: no storage yet */
                    memcpy(c->values + c->values_len, s->values + b0, b1 - b0);
                uint32_t delta = (uint32_t)c->values_len - b0;
                for (size_t k = 1; k <= n; k++)
                    c->offsets[c->nvalues + k] = s->offsets[v + k] + delta;
                c->values_len += b1 - b0;
            } else if (n == 1 && w == 8) { /* a constant size: a move, not a call */
                memcpy(c->values + c->values_len, s->values + v * 8, 8);
                c->values_len += 8;
            } else if (n == 1 && w == 4) {
                memcpy(c->values + c->values_len, s->values + v * 4, 4);
                c->values_len += 4;
            } else if (n) {
                memcpy(c->values + c->values_len, s->values + v * w, n * w);
                c->values_len += n * w;
            }
            c->nvalues += n;
            l = l1;
            v += n;
        }
    }
    if (rc == 0) {
        size_t *rows = cnt;
        memset(rows, 0, ndst * sizeof *rows);
        for (size_t r = 0; r < nrows; r++)
            rows[part[r]]++;
        for (size_t d = 0; d < ndst; d++)
            dst[d]->nrows += rows[d];
    }
    floe_free(cnt);
    return rc;
}
