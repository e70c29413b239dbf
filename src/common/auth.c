/*
 * auth.c - bearer tokens and grants (floe/auth.h).
 */
#include <string.h>
#include <strings.h>

#include "floe/auth.h"

/* Constant-time comparison of a with b[0..lb): the time taken must not reveal how much
 * of a token matched. */
static bool secret_equal(const char *a, const char *b, size_t lb) {
    size_t la = strlen(a);
    unsigned char d = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++)
        d |= (unsigned char)(a[i % (la ? la : 1)] ^ b[i]);
    return d == 0;
}

const floe_server_token *floe_token_find(const floe_server_token *tokens, size_t n,
                                         const char *authorization) {
    const char *h = authorization;
    if (!h || strncasecmp(h, "Bearer ", 7))
        return NULL;
    h += 7;
    while (*h == ' ' || *h == '\t')
        h++;
    size_t hl = strlen(h);
    while (hl && (h[hl - 1] == ' ' || h[hl - 1] == '\t')) /* optional white space */
        hl--;
    for (size_t i = 0; i < n; i++)
        if (tokens[i].secret && secret_equal(tokens[i].secret, h, hl))
            return &tokens[i];
    return NULL;
}

bool floe_grant_covers_table(const char *g, const char *table) {
    if (!strcmp(g, "*"))
        return true;
    size_t gl = strlen(g);
    if (gl >= 2 && g[gl - 2] == '.' && g[gl - 1] == '*')
        return !strncmp(table, g, gl - 1) && strchr(table + gl - 1, '.') == NULL;
    return !strcmp(g, table);
}

bool floe_grant_covers_namespace(const char *g, const char *ns) {
    if (!strcmp(g, "*"))
        return true;
    size_t gl = strlen(g), nl = strlen(ns);
    return gl == nl + 2 && !strncmp(g, ns, nl) && g[nl] == '.' && g[nl + 1] == '*';
}
