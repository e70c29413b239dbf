/*
 * lazy_pq.h - libpq, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <libpq-fe.h>: the names below then call through a table
 * that floe_lazy_pq() fills on first use.
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

/* The table, libpq.so.5 loaded on the first call (exits with a message naming
 * the library if it cannot be). Thread-safe. */
const floe_lazy_pq_fns *floe_lazy_pq(void);

#ifndef FLOE_LAZY_TABLES
#define PQclear (floe_lazy_pq()->PQclear)
#define PQcmdStatus (floe_lazy_pq()->PQcmdStatus)
#define PQcmdTuples (floe_lazy_pq()->PQcmdTuples)
#define PQconnectdbParams (floe_lazy_pq()->PQconnectdbParams)
#define PQconsumeInput (floe_lazy_pq()->PQconsumeInput)
#define PQerrorMessage (floe_lazy_pq()->PQerrorMessage)
#define PQexec (floe_lazy_pq()->PQexec)
#define PQexecParams (floe_lazy_pq()->PQexecParams)
#define PQfinish (floe_lazy_pq()->PQfinish)
#define PQgetisnull (floe_lazy_pq()->PQgetisnull)
#define PQgetvalue (floe_lazy_pq()->PQgetvalue)
#define PQnfields (floe_lazy_pq()->PQnfields)
#define PQntuples (floe_lazy_pq()->PQntuples)
#define PQresultErrorField (floe_lazy_pq()->PQresultErrorField)
#define PQresultErrorMessage (floe_lazy_pq()->PQresultErrorMessage)
#define PQresultStatus (floe_lazy_pq()->PQresultStatus)
#define PQsetNoticeReceiver (floe_lazy_pq()->PQsetNoticeReceiver)
#define PQstatus (floe_lazy_pq()->PQstatus)
#define PQtransactionStatus (floe_lazy_pq()->PQtransactionStatus)
#endif

#endif
