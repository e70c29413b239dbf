/*
 * floe/auth.h - bearer tokens with grants, shared by `floe serve` (ingest) and `floe
 * catalog serve` (the REST catalog). Tokens are written as [token NAME] sections of floe
 * serve's configuration file (secret = ..., grants = ...; floe_server_config_load reads
 * them; README.md, "floe serve").
 *
 * Grants: "ns.table" (that table), "ns.*" (the tables directly in namespace ns, and ns
 * itself), "*" (every table and namespace), and the literal grants a server defines for
 * itself ("admin", "metrics").
 */
#ifndef FLOE_AUTH_H
#define FLOE_AUTH_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_server_token {
    char *name;
    char *secret;            /* the bearer token */
    char **grants;           /* "ns.table", "ns.*", "*", "admin" */
    size_t ngrants;
} floe_server_token;

/* The token an Authorization header value ("Bearer SECRET") presents, or NULL for a
 * missing header, another scheme or an unknown secret. White space around the secret is
 * not part of it (HTTP's optional white space). Secrets are compared in constant time. */
const floe_server_token *floe_token_find(const floe_server_token *tokens, size_t n,
                                         const char *authorization);
/* True when grant g covers table "ns.name": "*", "ns.*" or "ns.name" itself. */
bool floe_grant_covers_table(const char *g, const char *table);
/* True when grant g covers namespace ns (its properties, its tables' list, creating or
 * dropping it): "*" or "ns.*". */
bool floe_grant_covers_namespace(const char *g, const char *ns);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
