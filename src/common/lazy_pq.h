/*
 * lazy_pq.h - libpq, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <libpq-fe.h>: the names below then call through a table
 * that floe_lazy_pq(err) fills, called first by each entry point.
 */
#ifndef FLOE_LAZY_PQ_H
#define FLOE_LAZY_PQ_H

#include <libpq-fe.h>

#include "common/lazylib.h"

#define FLOE_LAZY_PQ_FNS(X) \
    X(PQclear) \
    X(PQcmdStatus) \
    X(PQcmdTuples) \
    X(PQconnectdbParams) \
    X(PQconsumeInput) \
    X(PQerrorMessage) \
    X(PQexec) \
    X(PQexecParams) \
    X(PQfinish) \
    X(PQgetisnull) \
    X(PQgetvalue) \
    X(PQnfields) \
    X(PQntuples) \
    X(PQresultErrorField) \
    X(PQresultErrorMessage) \
    X(PQresultStatus) \
    X(PQsetNoticeReceiver) \
    X(PQstatus) \
    X(PQtransactionStatus)

typedef struct floe_lazy_pq_fns {
    FLOE_LAZY_PQ_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_pq_fns;

/* The table, libpq loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). Call it at each entry
 * point before the names below are used. */
const floe_lazy_pq_fns *floe_lazy_pq(floe_error *err);
/* The loaded table, for the names below (aborts as a bug when floe_lazy_pq has not
 * loaded it: see common/lazylib.h). */
const floe_lazy_pq_fns *floe_lazy_pq_table(void);

#ifndef FLOE_LAZY_TABLES
#define PQclear (floe_lazy_pq_table()->PQclear)
#define PQcmdStatus (floe_lazy_pq_table()->PQcmdStatus)
#define PQcmdTuples (floe_lazy_pq_table()->PQcmdTuples)
#define PQconnectdbParams (floe_lazy_pq_table()->PQconnectdbParams)
#define PQconsumeInput (floe_lazy_pq_table()->PQconsumeInput)
#define PQerrorMessage (floe_lazy_pq_table()->PQerrorMessage)
#define PQexec (floe_lazy_pq_table()->PQexec)
#define PQexecParams (floe_lazy_pq_table()->PQexecParams)
#define PQfinish (floe_lazy_pq_table()->PQfinish)
#define PQgetisnull (floe_lazy_pq_table()->PQgetisnull)
#define PQgetvalue (floe_lazy_pq_table()->PQgetvalue)
#define PQnfields (floe_lazy_pq_table()->PQnfields)
#define PQntuples (floe_lazy_pq_table()->PQntuples)
#define PQresultErrorField (floe_lazy_pq_table()->PQresultErrorField)
#define PQresultErrorMessage (floe_lazy_pq_table()->PQresultErrorMessage)
#define PQresultStatus (floe_lazy_pq_table()->PQresultStatus)
#define PQsetNoticeReceiver (floe_lazy_pq_table()->PQsetNoticeReceiver)
#define PQstatus (floe_lazy_pq_table()->PQstatus)
#define PQtransactionStatus (floe_lazy_pq_table()->PQtransactionStatus)
#endif

#endif
