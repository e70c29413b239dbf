/*
 * test_s3_sign.c - SigV4 against AWS's published vectors, URI encoding of the keys floe
 * writes, the XML scanner on S3 bodies and hostile ones, the AWS shared-file INI subset,
 * RFC 3339 timestamps, and the configuration precedence.
 *
 * Vectors: the AWS SigV4 test suite (credentials AKIDEXAMPLE, 20150830T123600Z, us-east-1,
 * service "service"), the S3 "Signature Calculations" examples (examplebucket, 20130524),
 * and the signing-key derivation example (20120215, iam).
 */
#include <stdlib.h>

#include "harness.h"
#include "common/lazy_crypto.h"
#include "io/s3_internal.h"

#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* Sign one request of the generic suite and return the signature (static buffer). */
static const char *suite_sign(const char *method, const char *path, const floe_s3_kv *q,
                              size_t nq, const floe_s3_kv *extra, size_t ne, const char *body,
                              floe_s3_signed *keep) {
    static char sig[65];
    floe_s3_kv h[8];
    size_t nh = 0;
    h[nh++] = (floe_s3_kv){"Host", "example.amazonaws.com"};
    h[nh++] = (floe_s3_kv){"X-Amz-Date", "20150830T123600Z"};
    for (size_t i = 0; i < ne; i++)
        h[nh++] = extra[i];
    char hash[65];
    floe_s3_sha256_hex(body, strlen(body), hash);
    floe_s3_sig_input in = {method, path, q, nq, h, nh, hash, "20150830T123600Z", "us-east-1",
                            "service", "AKIDEXAMPLE", SUITE_SECRET};
    floe_s3_signed s;
    floe_error err;
    if (floe_s3_sign(&in, &s, &err) < 0)
        return "sign failed";
    snprintf(sig, sizeof sig, "%s", s.signature);
    if (keep)
        *keep = s;
    else
        floe_s3_signed_free(&s);
    return sig;
}

TEST(test_signing_key_derivation) {
    uint8_t k[32];
    char hex[65];
    floe_s3_signing_key(SUITE_SECRET, "20120215", "us-east-1", "iam", k);
    floe_s3_hex(k, 32, hex);
    CHECK_EQ_STR(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

/* floe_s3_sign remembers the last signing key it derived: every change of secret, day,
 * region or service must derive again, and a secret too long to remember must still sign
 * right (each signature checked against the key derived here). */
TEST(test_signing_key_cache) {
    char longsec[200];
    memset(longsec, 'k', sizeof longsec - 1);
    longsec[sizeof longsec - 1] = '\0';
    const struct {
        const char *date, *region, *service, *secret;
    } seq[] = {
        {"20150830T123600Z", "us-east-1", "s3", SUITE_SECRET},
        {"20150830T123600Z", "us-east-1", "s3", S3_SECRET},
        {"20150830T123600Z", "us-east-1", "s3", SUITE_SECRET},
        {"20150831T000000Z", "us-east-1", "s3", SUITE_SECRET},
        {"20150831T000000Z", "eu-west-1", "s3", SUITE_SECRET},
        {"20150831T000000Z", "eu-west-1", "iam", SUITE_SECRET},
        {"20150831T000000Z", "eu-west-1", "iam", longsec},
        {"20150831T000000Z", "eu-west-1", "iam", SUITE_SECRET},
        {"20150830T123600Z", "us-east-1", "s3", SUITE_SECRET},
    };
    CHECK_EQ_STR(EMPTY_PAYLOAD_SHA256, EMPTY_SHA);
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
        floe_s3_kv h[] = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", seq[i].date}};
        floe_s3_sig_input in = {"GET", "/k", NULL, 0, h, 2, EMPTY_SHA, seq[i].date,
                                seq[i].region, seq[i].service, "AKIDEXAMPLE", seq[i].secret};
        floe_s3_signed s;
        floe_error err;
        REQUIRE(floe_s3_sign(&in, &s, &err) == 0);
        char date8[9], want[65];
        memcpy(date8, seq[i].date, 8);
        date8[8] = '\0';
        uint8_t key[32], sig[32];
        floe_s3_signing_key(seq[i].secret, date8, seq[i].region, seq[i].service, key);
        floe_s3_hmac_sha256(key, 32, s.string_to_sign, strlen(s.string_to_sign), sig);
        floe_s3_hex(sig, 32, want);
        if (strcmp(s.signature, want))
            harness_fail(__FILE__, __LINE__, "request %zu: signature %s, want %s", i,
                         s.signature, want);
        floe_s3_signed_free(&s);
    }
}

TEST(test_suite_get_vanilla) {
    floe_s3_signed s;
    CHECK_EQ_STR(suite_sign("GET", "/", NULL, 0, NULL, 0, "", &s),
                 "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    CHECK_EQ_STR(s.canonical_request, "GET\n/\n\nhost:example.amazonaws.com\n"
                                      "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA);
    CHECK_EQ_STR(s.string_to_sign,
                 "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                 "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
    CHECK_EQ_STR(s.authorization,
                 "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                 "aws4_request, SignedHeaders=host;x-amz-date, "
                 "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    floe_s3_signed_free(&s);
}

TEST(test_suite_queries) {
    /* get-vanilla-query-order-key-case: parameters are sorted */
    floe_s3_kv q1[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    floe_s3_signed s;
    CHECK_EQ_STR(suite_sign("GET", "/", q1, 2, NULL, 0, "", &s),
                 "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
    CHECK_EQ_STR(s.canonical_query, "Param1=value1&Param2=value2");
    floe_s3_signed_free(&s);
    /* get-vanilla-query-unreserved */
    const char *unres = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    floe_s3_kv q2[] = {{unres, unres}};
    CHECK_EQ_STR(suite_sign("GET", "/", q2, 1, NULL, 0, "", NULL),
                 "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197");
    /* get-vanilla-utf8-query: name U+1234 */
    floe_s3_kv q3[] = {{"\xe1\x88\xb4", "bar"}};
    CHECK_EQ_STR(suite_sign("GET", "/", q3, 1, NULL, 0, "", &s),
                 "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
    CHECK_EQ_STR(s.canonical_query, "%E1%88%B4=bar");
    floe_s3_signed_free(&s);
    /* post-vanilla-query */
    floe_s3_kv q4[] = {{"Param1", "value1"}};
    CHECK_EQ_STR(suite_sign("POST", "/", q4, 1, NULL, 0, "", NULL),
                 "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11");
    /* post-vanilla-query-nonunreserved: every reserved character %-encoded */
    floe_s3_kv q5[] = {{"@#$%^", ""}, {"+", "/,?><`\";:\\|][{}"}};
    CHECK_EQ_STR(suite_sign("POST", "/", q5, 2, NULL, 0, "", &s),
                 "66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e");
    CHECK_EQ_STR(s.canonical_query,
                 "%2B=%2F%2C%3F%3E%3C%60%22%3B%3A%5C%7C%5D%5B%7B%7D&%40%23%24%25%5E=");
    floe_s3_signed_free(&s);
}

TEST(test_suite_paths_and_headers) {
    /* get-unreserved and get-utf8 */
    CHECK_EQ_STR(suite_sign("GET",
                            "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                            NULL, 0, NULL, 0, "", NULL),
                 "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
    floe_s3_signed s;
    CHECK_EQ_STR(suite_sign("GET", "/\xe1\x88\xb4", NULL, 0, NULL, 0, "", &s),
                 "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
    CHECK_EQ_STR(s.canonical_path, "/%E1%88%B4");
    floe_s3_signed_free(&s);
    /* post-vanilla, post-header-key-sort, post-header-value-case */
    CHECK_EQ_STR(suite_sign("POST", "/", NULL, 0, NULL, 0, "", NULL),
                 "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    floe_s3_kv h1[] = {{"My-Header1", "value1"}};
    CHECK_EQ_STR(suite_sign("POST", "/", NULL, 0, h1, 1, "", NULL),
                 "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c");
    floe_s3_kv h2[] = {{"My-Header1", "VALUE1"}};
    CHECK_EQ_STR(suite_sign("POST", "/", NULL, 0, h2, 1, "", NULL),
                 "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d");
    /* get-header-value-trim: surrounding spaces dropped, inner runs collapsed */
    floe_s3_kv h3[] = {{"My-Header1", " value1"}, {"My-Header2", "\"a   b   c\""}};
    CHECK_EQ_STR(suite_sign("GET", "/", NULL, 0, h3, 2, "", &s),
                 "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
    CHECK(strstr(s.canonical_request, "my-header2:\"a b c\"\n") != NULL);
    floe_s3_signed_free(&s);
    /* get-header-key-duplicate: repeated headers joined in order */
    floe_s3_kv h4[] = {{"My-Header1", "value2"}, {"My-Header1", "value2"},
                       {"My-Header1", "value1"}};
    CHECK_EQ_STR(suite_sign("GET", "/", NULL, 0, h4, 3, "", NULL),
                 "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea");
    /* post-sts-header-before: the session token is signed */
    floe_s3_kv h5[] = {
        {"X-Amz-Security-Token",
         "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMic"
         "RXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKs"
         "burEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0"
         "iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="}};
    CHECK_EQ_STR(suite_sign("POST", "/", NULL, 0, h5, 1, "", &s),
                 "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead");
    CHECK_EQ_STR(s.signed_headers, "host;x-amz-date;x-amz-security-token");
    floe_s3_signed_free(&s);
    /* post-x-www-form-urlencoded: a body and a content-type */
    floe_s3_kv h6[] = {{"Content-Type", "application/x-www-form-urlencoded"}};
    CHECK_EQ_STR(suite_sign("POST", "/", NULL, 0, h6, 1, "Param1=value1", NULL),
                 "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
}

/* The S3 documentation's examples: examplebucket, 2013-05-24. */
static void s3_doc_sign(const char *method, const char *path, const floe_s3_kv *q, size_t nq,
                        const floe_s3_kv *extra, size_t ne, const char *payload,
                        floe_s3_signed *out) {
    floe_s3_kv h[8];
    size_t nh = 0;
    h[nh++] = (floe_s3_kv){"host", "examplebucket.s3.amazonaws.com"};
    h[nh++] = (floe_s3_kv){"x-amz-date", "20130524T000000Z"};
    h[nh++] = (floe_s3_kv){"x-amz-content-sha256", payload};
    for (size_t i = 0; i < ne; i++)
        h[nh++] = extra[i];
    floe_s3_sig_input in = {method, path, q, nq, h, nh, payload, "20130524T000000Z",
                            "us-east-1", "s3", "AKIAIOSFODNN7EXAMPLE", S3_SECRET};
    floe_error err;
    memset(out, 0, sizeof *out);
    CHECK_OK(floe_s3_sign(&in, out, &err), err);
}

TEST(test_s3_doc_examples) {
    floe_s3_signed s;
    /* GET Object with a Range header */
    floe_s3_kv range[] = {{"Range", "bytes=0-9"}};
    s3_doc_sign("GET", "/test.txt", NULL, 0, range, 1, EMPTY_SHA, &s);
    CHECK_EQ_STR(s.canonical_request,
                 "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                 "x-amz-content-sha256:" EMPTY_SHA "\nx-amz-date:20130524T000000Z\n\n"
                 "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA);
    CHECK_EQ_STR(s.string_to_sign,
                 "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                 "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    CHECK_EQ_STR(s.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    floe_s3_signed_free(&s);
    /* PUT Object: '$' in the key, a real payload hash, a Date header */
    char body_hash[65];
    floe_s3_sha256_hex("Welcome to Amazon S3.", 21, body_hash);
    CHECK_EQ_STR(body_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    floe_s3_kv put_h[] = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                          {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
    s3_doc_sign("PUT", "/test$file.text", NULL, 0, put_h, 2, body_hash, &s);
    CHECK_EQ_STR(s.canonical_path, "/test%24file.text");
    CHECK_EQ_STR(s.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    floe_s3_signed_free(&s);
    /* GET Bucket Lifecycle: a subresource with an empty value */
    floe_s3_kv lq[] = {{"lifecycle", ""}};
    s3_doc_sign("GET", "/", lq, 1, NULL, 0, EMPTY_SHA, &s);
    CHECK_EQ_STR(s.canonical_query, "lifecycle=");
    CHECK_EQ_STR(s.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    floe_s3_signed_free(&s);
    /* GET Bucket (List Objects) with max-keys and prefix, given out of order */
    floe_s3_kv bq[] = {{"prefix", "J"}, {"max-keys", "2"}};
    s3_doc_sign("GET", "/", bq, 2, NULL, 0, EMPTY_SHA, &s);
    CHECK_EQ_STR(s.canonical_query, "max-keys=2&prefix=J");
    CHECK_EQ_STR(s.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    floe_s3_signed_free(&s);
}

static char *enc(const char *s, bool keep_slash) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_s3_uri_encode(&b, s, strlen(s), keep_slash);
    return floe_buf_detach(&b, NULL);
}

TEST(test_uri_encoding_of_floe_keys) {
    struct {
        const char *in;
        bool keep_slash;
        const char *want;
    } cases[] = {
        {"/t/data/id_bucket=0/ts_day=2026-10-06/f.parquet", true,
         "/t/data/id_bucket%3D0/ts_day%3D2026-10-06/f.parquet"},
        {"/b/a b+c", true, "/b/a%20b%2Bc"},
        {"/b/~tilde_-.", true, "/b/~tilde_-."},
        {"/b/\xc3\xbc\xe2\x82\xac", true, "/b/%C3%BC%E2%82%AC"},
        {"a/b", false, "a%2Fb"},
        {"*()!'", false, "%2A%28%29%21%27"},
        {"event_type=orders/x%y", true, "event_type%3Dorders/x%25y"},
        {"", true, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = enc(cases[i].in, cases[i].keep_slash);
        CHECK_EQ_STR(got, cases[i].want);
        floe_free(got);
    }
    /* a key with '=' and a space signs with the encoded path and the encoded query */
    floe_s3_kv q[] = {{"prefix", "t/id_bucket=0/a b"}, {"list-type", "2"}};
    floe_s3_signed s;
    s3_doc_sign("GET", "/bkt/id_bucket=0/a b", q, 2, NULL, 0, EMPTY_SHA, &s);
    CHECK_EQ_STR(s.canonical_path, "/bkt/id_bucket%3D0/a%20b");
    CHECK_EQ_STR(s.canonical_query, "list-type=2&prefix=t%2Fid_bucket%3D0%2Fa%20b");
    CHECK(strncmp(s.canonical_request, "GET\n/bkt/id_bucket%3D0/a%20b\nlist-type=2&prefix=", 47) ==
          0);
    floe_s3_signed_free(&s);
    char md5[25];
    floe_s3_md5_base64("", 0, md5);
    CHECK_EQ_STR(md5, "1B2M2Y8AsgTpgAmY7PhCfg==");
    char date[17];
    floe_s3_amz_date(INT64_C(1440938160000), date);
    CHECK_EQ_STR(date, "20150830T123600Z");
}

typedef struct leaf_log {
    char buf[2048];
} leaf_log;

static int log_leaf(void *ctx, const char *parent, const char *name, const char *text,
                    size_t len) {
    leaf_log *l = ctx;
    size_t n = strlen(l->buf);
    if (text)
        snprintf(l->buf + n, sizeof l->buf - n, "%s/%s=%.*s;", parent, name, (int)len, text);
    else
        snprintf(l->buf + n, sizeof l->buf - n, "%s/%s.end;", parent, name);
    return 0;
}

TEST(test_xml_scanner) {
    const char *list =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>b</Name><IsTruncated>true</IsTruncated>"
        "<Contents><Key>a&amp;b &lt;c&gt; &#x1234;&#65;</Key><Size>12</Size></Contents>"
        "<!-- comment --><NextContinuationToken><![CDATA[t<1>]]></NextContinuationToken>"
        "<Empty/></ListBucketResult>";
    leaf_log l = {""};
    floe_error err;
    CHECK_OK(floe_s3_xml_scan(list, strlen(list), log_leaf, &l, &err), err);
    CHECK_EQ_STR(l.buf, "ListBucketResult/Name=b;ListBucketResult/IsTruncated=true;"
                        "Contents/Key=a&b <c> \xe1\x88\xb4" "A;Contents/Size=12;"
                        "ListBucketResult/Contents.end;ListBucketResult/NextContinuationToken=t<1>;"
                        "ListBucketResult/Empty=;/ListBucketResult.end;");
    /* hostile or broken bodies fail cleanly */
    const char *bad[] = {
        "<a><b></a></b>",
        "<a>",
        "<a></a><b></b>",
        "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
        "<a>&bogus;</a>",
        "<a>&#0;</a>",
        "<a>&#x110000;</a>",
        "<a>&#xD800;</a>",
        "<a>&amp</a>",
        "<a b=\"unterminated>",
        "text<a/>",
        "",
        "<a><![CDATA[never ends</a>",
        "<a><!-- never ends</a>",
        "<ns:>x</ns:>",
        "<\x01a>x</\x01a>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        l.buf[0] = '\0';
        int rc = floe_s3_xml_scan(bad[i], strlen(bad[i]), log_leaf, &l, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "bad xml %zu accepted: %s", i, bad[i]);
    }
    /* nesting deeper than the cap */
    char deep[40 * 3 + 40 * 4 + 1];
    size_t o = 0;
    for (int i = 0; i < 40; i++)
        o += (size_t)snprintf(deep + o, sizeof deep - o, "<a>");
    for (int i = 0; i < 40; i++)
        o += (size_t)snprintf(deep + o, sizeof deep - o, "</a>");
    CHECK_EQ_INT(floe_s3_xml_scan(deep, o, log_leaf, &l, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "deep") != NULL);
    /* every truncation of a valid body fails cleanly, never reads past the end */
    for (size_t cut = 0; cut < strlen(list); cut++) {
        char *copy = floe_malloc(cut ? cut : 1);
        memcpy(copy, list, cut);
        l.buf[0] = '\0';
        CHECK(floe_s3_xml_scan(copy, cut, log_leaf, &l, &err) < 0);
        floe_free(copy);
    }
}

TEST(test_time_parse) {
    int64_t ms = 0;
    floe_error err;
    CHECK_OK(floe_s3_parse_time("2015-08-30T12:36:00.000Z", &ms, &err), err);
    CHECK_EQ_INT(ms, INT64_C(1440938160000));
    CHECK_OK(floe_s3_parse_time("2015-08-30T12:36:00.5Z", &ms, &err), err);
    CHECK_EQ_INT(ms, INT64_C(1440938160500));
    CHECK_OK(floe_s3_parse_time("2015-08-30T14:36:00+02:00", &ms, &err), err);
    CHECK_EQ_INT(ms, INT64_C(1440938160000));
    CHECK_OK(floe_s3_parse_time("1969-12-31T23:59:59Z", &ms, &err), err);
    CHECK_EQ_INT(ms, -1000);
    const char *bad[] = {"", "2015-08-30", "2015-13-01T00:00:00Z", "2015-08-30T12:36:00",
                         "2015-08-30T12:36:00.Z", "2015-08-30T12:36:00Zjunk",
                         "x015-08-30T12:36:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_EQ_INT(floe_s3_parse_time(bad[i], &ms, &err), FLOE_ECORRUPT);
}

TEST(test_ini_subset) {
    const char *cfg = "# comment\n"
                      "[default]\n"
                      "region = eu-west-1\n"
                      "aws_access_key_id=AKIDDEFAULT\n"
                      "\n"
                      "[profile dev]\r\n"
                      "region=us-west-2\r\n"
                      "s3 =\n"
                      "  addressing_style = path\n"
                      "  endpoint_url = http://127.0.0.1:9000\n"
                      "endpoint_url = http://other\n"
                      "[ profile broken\n"
                      "region = nowhere\n"
                      "; another comment\n"
                      "[profile spaced]\n"
                      "  region   =   ap-south-1   \n";
    size_t n = strlen(cfg);
    char *v;
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "default", NULL, "region"), "eu-west-1");
    floe_free(v);
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "default", NULL, "aws_access_key_id"),
                 "AKIDDEFAULT");
    floe_free(v);
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "profile dev", NULL, "region"), "us-west-2");
    floe_free(v);
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "profile dev", "s3", "addressing_style"), "path");
    floe_free(v);
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "profile dev", "s3", "endpoint_url"),
                 "http://127.0.0.1:9000");
    floe_free(v);
    CHECK_EQ_STR(v = floe_s3_ini_get(cfg, n, "profile dev", NULL, "endpoint_url"),
                 "http://other");
    floe_free(v);
    CHECK(floe_s3_ini_get(cfg, n, "default", "s3", "addressing_style") == NULL);
    CHECK(floe_s3_ini_get(cfg, n, "profile broken", NULL, "region") == NULL);
    CHECK(floe_s3_ini_get(cfg, n, "nosuch", NULL, "region") == NULL);
    /* hostile: no newline at the end, embedded NULs, an overlong line, a lone '[' */
    const char odd[] = "[x]\nk=v\0junk\n[\n=\n==\n";
    CHECK_EQ_STR(v = floe_s3_ini_get(odd, sizeof odd - 1, "x", NULL, "k"), "v");
    floe_free(v);
    size_t big = 10000;
    char *longline = floe_malloc(big + 20);
    memcpy(longline, "[x]\nk=", 6);
    memset(longline + 6, 'a', big);
    memcpy(longline + 6 + big, "\nj=1", 4);
    CHECK(floe_s3_ini_get(longline, big + 10, "x", NULL, "k") == NULL);
    CHECK_EQ_STR(v = floe_s3_ini_get(longline, big + 10, "x", NULL, "j"), "1");
    floe_free(v);
    floe_free(longline);
    CHECK(floe_s3_ini_get("[", 1, "x", NULL, "k") == NULL);
    CHECK(floe_s3_ini_get("", 0, "x", NULL, "k") == NULL);
}

static void clear_aws_env(void) {
    const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                          "AWS_S3_FORCE_PATH_STYLE", "FLOE_S3_ADDRESSING", "FLOE_S3_PART_SIZE",
                          "FLOE_S3_MAX_ATTEMPTS", "AWS_SHARED_CREDENTIALS_FILE",
                          "AWS_CONFIG_FILE", "FLOE_S3_LIST_MAX_KEYS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

TEST(test_config_precedence) {
    const char *dir = harness_tmpdir();
    char cred[512], conf[512];
    snprintf(cred, sizeof cred, "%s/credentials", dir);
    snprintf(conf, sizeof conf, "%s/config", dir);
    const char *credtext = "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = SKFILE\n"
                           "[dev]\naws_access_key_id=AKDEV\naws_secret_access_key=SKDEV\n"
                           "aws_session_token=TOKDEV\n";
    const char *conftext = "[default]\nregion = eu-central-1\n"
                           "[profile dev]\nregion = us-west-2\ns3 =\n  addressing_style = path\n"
                           "  endpoint_url = http://127.0.0.1:9/\n";
    REQUIRE(harness_write_file(cred, credtext, strlen(credtext)) == 0);
    REQUIRE(harness_write_file(conf, conftext, strlen(conftext)) == 0);
    clear_aws_env();
    setenv("AWS_SHARED_CREDENTIALS_FILE", cred, 1);
    setenv("AWS_CONFIG_FILE", conf, 1);
    floe_s3_config c;
    floe_error err;
    REQUIRE_OK(floe_s3_config_load(&c, harness_getenv, NULL, &err), err);
    CHECK_EQ_STR(c.access_key, "AKFILE");
    CHECK_EQ_STR(c.region, "eu-central-1");
    CHECK(c.endpoint == NULL);
    CHECK(!c.path_style);
    CHECK_EQ_U64(c.part_size, 8u << 20);
    CHECK_EQ_INT(c.max_attempts, 10);
    floe_s3_config_free(&c);

    setenv("AWS_PROFILE", "dev", 1);
    REQUIRE_OK(floe_s3_config_load(&c, harness_getenv, NULL, &err), err);
    CHECK_EQ_STR(c.access_key, "AKDEV");
    CHECK_EQ_STR(c.session_token, "TOKDEV");
    CHECK_EQ_STR(c.region, "us-west-2");
    CHECK_EQ_STR(c.endpoint, "http://127.0.0.1:9");
    CHECK(c.path_style);
    floe_s3_config_free(&c);

    /* the environment wins over the files */
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
    setenv("AWS_REGION", "sa-east-1", 1);
    setenv("AWS_ENDPOINT_URL", "http://generic:1", 1);
    setenv("AWS_ENDPOINT_URL_S3", "https://s3only:2", 1);
    setenv("AWS_S3_FORCE_PATH_STYLE", "false", 1);
    setenv("FLOE_S3_PART_SIZE", "6MiB", 1);
    REQUIRE_OK(floe_s3_config_load(&c, harness_getenv, NULL, &err), err);
    CHECK_EQ_STR(c.access_key, "AKENV");
    CHECK(c.session_token == NULL); /* the file's token belongs to the file's keys */
    CHECK_EQ_STR(c.region, "sa-east-1");
    CHECK_EQ_STR(c.endpoint, "https://s3only:2");
    CHECK(!c.path_style);
    CHECK_EQ_U64(c.part_size, 6u << 20);
    floe_s3_config_free(&c);

    /* refusals name the setting */
    setenv("FLOE_S3_PART_SIZE", "1MiB", 1);
    CHECK_EQ_INT(floe_s3_config_load(&c, harness_getenv, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "FLOE_S3_PART_SIZE") != NULL);
    unsetenv("FLOE_S3_PART_SIZE");
    setenv("AWS_ENDPOINT_URL_S3", "ftp://x", 1);
    CHECK_EQ_INT(floe_s3_config_load(&c, harness_getenv, NULL, &err), FLOE_EINVALID);
    setenv("AWS_ENDPOINT_URL_S3", "http://ok", 1);
    setenv("AWS_S3_FORCE_PATH_STYLE", "maybe", 1);
    CHECK_EQ_INT(floe_s3_config_load(&c, harness_getenv, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "AWS_S3_FORCE_PATH_STYLE") != NULL);
    clear_aws_env();
}

TEST(test_uri_parse) {
    char *b, *k;
    floe_error err;
    REQUIRE_OK(floe_s3_uri_parse("s3://bkt/a/b=1/c d", &b, &k, &err), err);
    CHECK_EQ_STR(b, "bkt");
    CHECK_EQ_STR(k, "a/b=1/c d");
    floe_free(b);
    floe_free(k);
    REQUIRE_OK(floe_s3_uri_parse("s3a://bkt", &b, &k, &err), err);
    CHECK_EQ_STR(k, "");
    floe_free(b);
    floe_free(k);
    CHECK_EQ_INT(floe_s3_uri_parse("s3:///key", &b, &k, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_s3_uri_parse("s3://bad bucket/key", &b, &k, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_s3_uri_parse("/local/path", &b, &k, &err), FLOE_EINVALID);
}

static void check_target(const floe_s3_config *c, const char *bucket, const char *key,
                         const char *want_base, const char *want_host, const char *want_path) {
    char *base, *host, *path;
    floe_error err;
    REQUIRE_OK(floe_s3_build_target(c, bucket, key, &base, &host, &path, &err), err);
    CHECK_EQ_STR(base, want_base);
    CHECK_EQ_STR(host, want_host);
    CHECK_EQ_STR(path, want_path);
    floe_free(base);
    floe_free(host);
    floe_free(path);
}

TEST(test_addressing) {
    floe_s3_config c;
    memset(&c, 0, sizeof c);
    c.region = "eu-west-1";
    /* AWS, virtual-hosted */
    check_target(&c, "bkt", "a/b=1", "https://bkt.s3.eu-west-1.amazonaws.com",
                 "bkt.s3.eu-west-1.amazonaws.com", "/a/b=1");
    /* a dotted bucket falls back to path style */
    check_target(&c, "my.bkt", "k", "https://s3.eu-west-1.amazonaws.com",
                 "s3.eu-west-1.amazonaws.com", "/my.bkt/k");
    /* bucket-level request */
    check_target(&c, "bkt", "", "https://bkt.s3.eu-west-1.amazonaws.com",
                 "bkt.s3.eu-west-1.amazonaws.com", "/");
    /* custom endpoint with a port, path style */
    c.endpoint = "http://127.0.0.1:9000";
    c.path_style = true;
    check_target(&c, "bkt", "x y", "http://127.0.0.1:9000", "127.0.0.1:9000", "/bkt/x y");
    check_target(&c, "bkt", "", "http://127.0.0.1:9000", "127.0.0.1:9000", "/bkt");
    /* custom endpoint, virtual-hosted, with a base path */
    c.endpoint = "https://storage.example.com/s3";
    c.path_style = false;
    check_target(&c, "bkt", "k", "https://bkt.storage.example.com", "bkt.storage.example.com",
                 "/s3/k");
}

int main(void) {
    /* the hashes call libcrypto, which s3_call loads first in floe */
    if (!floe_lazy_crypto(NULL)) {
        fprintf(stderr, "test_s3_sign: libcrypto cannot be loaded\n");
        return 1;
    }
    RUN(test_addressing);
    RUN(test_signing_key_derivation);
    RUN(test_signing_key_cache);
    RUN(test_suite_get_vanilla);
    RUN(test_suite_queries);
    RUN(test_suite_paths_and_headers);
    RUN(test_s3_doc_examples);
    RUN(test_uri_encoding_of_floe_keys);
    RUN(test_xml_scanner);
    RUN(test_time_parse);
    RUN(test_ini_subset);
    RUN(test_config_precedence);
    RUN(test_uri_parse);
    return harness_finish();
}
