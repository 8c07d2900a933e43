/* fuzz_webui_router.c — the dashboard server's answer to a request: the
 * checks of its target and head, parameter validation, routing, and the
 * handlers, on a small store (tests/fuzz/stores/every_kind.sqlite).
 *
 * The input is a request head as a client sends it, lines ending in
 * "\n" (or "\r\n"):
 *     GET /api/scalars/series?run=alpha&tag=loss&points=5 HTTP/1.1
 *     Host: localhost:6006
 * It is taken as libmicrohttpd 0.9.75 takes it: the method up to the
 * first space, the version after the last, the target between; header
 * lines "Name: value", white space around the value dropped, the head
 * ending at an empty line; the path percent-decoded, the query split at
 * '&' and the first '=', '+' read as a space, names and values
 * percent-decoded. A head libmicrohttpd would refuse itself (a version
 * other than HTTP/1.0 and 1.1, a header line without ':', a NUL byte) is
 * skipped. Then the server's own code runs, as it does for every request:
 * gb__check_target on the raw target, and gb__answer_request
 * (webui/answer.h) on the head, with a pooled reader of the store.
 *
 * What must hold (http_api.md): no crash, leak or undefined behaviour;
 * the status is one the API documents, and never 5xx (the store is
 * sound, so whatever the request, the fault is the client's: 4xx); any
 * method but GET and HEAD is 405; JSON bodies are well-formed JSON
 * (json_check.h) and error bodies are {"error": a message, "status": the
 * status}; PNGs start with their signature; the live stream is only
 * /api/events.
 */
#include <microhttpd.h>
#include <strings.h>

#include "answer.h"
#include "fuzz_target.h"
#include "json_check.h"
#include "request_head.h"
#include "respond.h"

#define MAX_HEAD 8192    /* bytes of a head looked at */
#define MAX_LINES 128

static gb__hosts hosts;
static gb__reader_pool *pool;

static void free_pool(void) { gb__pool_free(pool); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    char err[512];
    FUZZ_CHECK(gb__hosts_init(&hosts, "127.0.0.1", "dash.example", err, sizeof err), "%s", err);
    pool = gb__pool_new(GB_FUZZ_DIR "/stores/every_kind.sqlite", 1, err, sizeof err);
    FUZZ_CHECK(pool != NULL, "%s", err);
    atexit(free_pool);
    return 0;
}

/* ---- the head, as libmicrohttpd reads it ---------------------------------------------- */

typedef struct request {
    char text[MAX_HEAD + 1];
    char *method, *target, *version;
    char *name[MAX_LINES], *value[MAX_LINES];
    size_t headers;
} request;

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

/* "METHOD target VERSION": false if libmicrohttpd would not take it. */
static bool split_request_line(request *r, char *line) {
    char *first = strchr(line, ' '), *last = strrchr(line, ' ');
    if (!first || first == last) return false;
    *first = *last = '\0';
    r->method = line;
    r->target = first + 1;
    r->version = last + 1;
    return *r->method && *r->target &&
           (!strcmp(r->version, "HTTP/1.1") || !strcmp(r->version, "HTTP/1.0"));
}

static bool parse_request(request *r, const uint8_t *data, size_t size) {
    if (size > MAX_HEAD || memchr(data, '\0', size)) return false;
    memcpy(r->text, data, size);
    r->text[size] = '\0';
    r->headers = 0;
    char *rest = r->text;
    for (size_t i = 0;; i++) {
        char *line = strsep(&rest, "\n");
        if (!line) return i > 0;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r') line[n - 1] = '\0';
        if (i == 0) {
            if (!split_request_line(r, line)) return false;
            continue;
        }
        if (!*line) return true;   /* the head's end */
        char *colon = strchr(line, ':');
        if (!colon || r->headers == MAX_LINES) return false;
        *colon = '\0';
        r->name[r->headers] = line;
        r->value[r->headers++] = trim(colon + 1);
    }
}

/* libmicrohttpd's decoding of a query name or value: '+' is a space,
 * then %XX escapes; returns the decoded length (a %00 makes it differ
 * from strlen). */
static size_t unescape(char *s) {
    for (char *p = strchr(s, '+'); p; p = strchr(p + 1, '+')) *p = ' ';
    return MHD_http_unescape(s);
}

/* Splits the query (changing it in place) as libmicrohttpd does:
 * "a=1&b&=c&" gives a = "1", b without a value, "" = "c". */
static void add_params(gb__head *head, char *query) {
    while (query && *query) {
        char *amp = strchr(query, '&'), *eq = strchr(query, '=');
        if (amp) *amp = '\0';
        char *value = eq && (!amp || eq < amp) ? eq + 1 : NULL;
        if (value) value[-1] = '\0';
        size_t name_len = unescape(query), value_len = value ? unescape(value) : 0;
        gb__head_add_param(head, query, name_len, value, value_len);
        query = amp ? amp + 1 : NULL;
    }
}

static void read_host(const request *r, gb__head *head) {
    for (size_t i = 0; i < r->headers; i++)
        if (!strcasecmp(r->name[i], "Host") && !head->host_count++) head->host = r->value[i];
}

/* ---- checks -------------------------------------------------------------------------------- */

/* An error body: {"error": a message, "status": status}, well-formed. */
static void check_error_body(const char *body, size_t len, unsigned status) {
    static const char start[] = "{\"error\":\"";
    char end[32];
    size_t n = (size_t)snprintf(end, sizeof end, "\",\"status\":%u}", status);
    FUZZ_CHECK(json_valid(body, len), "error body is not JSON: %.*s", (int)len, body);
    FUZZ_CHECK(len > sizeof start - 1 + n && !memcmp(body, start, sizeof start - 1) &&
                   !memcmp(body + len - n, end, n),
               "not an error body with a message and status %u: %.*s", status, (int)len, body);
}

/* The refusal of a request at its request line: a whole HTTP response. */
static void check_refusal(int status, const char *msg) {
    FUZZ_CHECK(status == 400 || status == 414, "the target is refused with %d", status);
    size_t len;
    char *bytes = gb__raw_error((unsigned)status, msg, &len);
    FUZZ_CHECK(bytes != NULL, "no refusal made");
    char line[32];
    int n = snprintf(line, sizeof line, "HTTP/1.1 %d ", status);
    const char *body = memmem(bytes, len, "\r\n\r\n", 4);
    FUZZ_CHECK(len > (size_t)n && !memcmp(bytes, line, (size_t)n) && body,
               "the refusal is not an HTTP response");
    body += 4;
    check_error_body(body, len - (size_t)(body - bytes), (unsigned)status);
    free(bytes);
}

static void check_answer(const gb__head *head, const gb__answer *a) {
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    bool get = !strcmp(head->method, "GET") || !strcmp(head->method, "HEAD");
    FUZZ_CHECK((a->status == 405) == !get, "method %s answered %u", head->method, a->status);
    if (a->kind == GB__ANSWER_EVENTS)
        FUZZ_CHECK(a->status == 200 && !strcmp(head->path, "/api/events"), "events on %s",
                   head->path);
    if (a->kind == GB__ANSWER_FILE)
        FUZZ_CHECK(a->status == 200 && a->file && a->file->size, "an empty file");
    if (a->kind != GB__ANSWER_BODY) return;
    FUZZ_CHECK(a->status == 200 || a->status == 400 || a->status == 403 || a->status == 404 ||
                   a->status == 405,
               "status %u for %s: %.*s", a->status, head->path, (int)a->len, a->body);
    /* Stored files are bounded by their writers (an embedding's vectors
     * up to GB_SUMMARY_EMBEDDING_MAX_BYTES), JSON by the server. */
    FUZZ_CHECK(a->body && a->len <= (size_t)GB_SUMMARY_EMBEDDING_MAX_BYTES, "a body of %zu bytes", a->len);
    if (!strcmp(a->content_type, "image/png")) {
        FUZZ_CHECK(a->status == 200 && a->len > 8 && !memcmp(a->body, png, 8), "not a PNG");
        return;
    }
    if (!strcmp(a->content_type, "audio/wav")) {
        FUZZ_CHECK(a->status == 200 && a->len >= 44 && !memcmp(a->body, "RIFF", 4), "not a WAV");
        return;
    }
    if (!strcmp(a->content_type, "application/octet-stream")) {   /* float32 vectors */
        FUZZ_CHECK(a->status == 200 && a->len % 4 == 0, "vectors of %zu bytes", a->len);
        return;
    }
    if (!strncmp(a->content_type, "text/tab-separated-values", 25)) {
        FUZZ_CHECK(a->status == 200, "metadata with status %u", a->status);
        return;
    }
    FUZZ_CHECK(a->len <= GB__MAX_RESPONSE, "a JSON body of %zu bytes", a->len);
    FUZZ_CHECK(!strcmp(a->content_type, GB__JSON_TYPE), "content type %s", a->content_type);
    if (a->status != 200) {
        check_error_body(a->body, a->len, a->status);
        return;
    }
    FUZZ_CHECK(json_valid(a->body, a->len), "%s: the body is not JSON: %.*s", head->path,
               (int)a->len, a->body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static request r;
    if (!parse_request(&r, data, size)) return 0;
    char msg[128];
    bool nul_in_path;
    int status = gb__check_target(r.target, &nul_in_path, msg, sizeof msg);
    if (status) {
        check_refusal(status, msg);
        return 0;
    }
    gb__head head = {.method = r.method, .version = r.version, .path = r.target,
                     .nul_in_path = nul_in_path};
    char *query = strchr(r.target, '?');
    if (query) *query++ = '\0';
    MHD_http_unescape(r.target);
    add_params(&head, query);
    read_host(&r, &head);
    gb__answer a;
    FUZZ_CHECK(gb__answer_request(&hosts, NULL, pool, &head, &a), "no answer made");
    check_answer(&head, &a);
    gb__answer_free(&a);
    /* Behind a token (a board beyond loopback), with none carried: only
     * the head's own refusals, 401, or the redirect of a right token in
     * the address, to an address of this server without it. */
    FUZZ_CHECK(gb__answer_request(&hosts, "fuzz-token-1", pool, &head, &a), "no answer made");
    if (a.kind == GB__ANSWER_LOGIN)
        FUZZ_CHECK(a.status == 302 && a.body && a.body[0] == '/' && !strstr(a.body, "token=fuzz"),
                   "a login to %s", a.body ? a.body : "(none)");
    else
        FUZZ_CHECK(a.kind == GB__ANSWER_BODY && (a.status == 400 || a.status == 401 ||
                                                 a.status == 403 || a.status == 405),
                   "behind a token, %s answered %u", head.path, a.status);
    gb__answer_free(&a);
    return 0;
}
