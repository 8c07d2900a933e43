/* answer.c — the board's answer to a request whose head is in (answer.h):
 * the head's checks in the order http_api.md gives them, then the route.
 */
#include "answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "respond.h"

void gb__head_add_param(gb__head *head, const char *name, size_t name_size, const char *value,
                        size_t value_size) {
    /* A NUL decoded from %00 would silently cut the name or value short. */
    if (strlen(name) != name_size || (value && strlen(value) != value_size)) head->param_nul = true;
    if (head->param_count < GB__HEAD_PARAMS) {
        head->param_name[head->param_count] = name;
        head->param_value[head->param_count] = value;
    }
    head->param_count++;
}

void gb__answer_free(gb__answer *a) {
    free(a->body);
    a->body = NULL;
}

/* {"error": msg, "status": status}; false when out of memory. */
static bool error_answer(gb__answer *out, unsigned status, const char *msg) {
    *out = (gb__answer){.kind = GB__ANSWER_BODY, .status = status, .content_type = GB__JSON_TYPE};
    out->body = gb__error_body(status, msg, &out->len);
    return out->body != NULL;
}

static bool body_answer(gb__answer *out, char *body, size_t len, const char *content_type) {
    *out = (gb__answer){.kind = GB__ANSWER_BODY, .status = 200, .body = body, .len = len,
                        .content_type = content_type};
    return true;
}

/* ---- parameters and routes ----------------------------------------------------------- */

static bool head_param(void *ctx, size_t i, const char **name, const char **value) {
    const gb__head *h = ctx;
    if (i >= h->param_count || i >= GB__HEAD_PARAMS) return false;
    *name = h->param_name[i];
    *value = h->param_value[i];
    return true;
}

/* The head's parameters checked against req->route's declaration; false
 * (the reason in req->error) if they do not match it. */
static bool params_valid(gb__request *req, const gb__head *head) {
    if (head->param_nul) {
        gb__fail(req, 400, "a parameter contains a NUL byte");
        return false;
    }
    return gb__validate_params(req, head_param, (void *)head);
}

/* The finished request as an answer: its error, its own body (a PNG), or
 * its JSON. */
static bool request_answer(gb__request *req, int status, gb__answer *out) {
    if (status != 200) return error_answer(out, (unsigned)status, req->error[0] ? req->error : "error");
    if (req->body) {
        body_answer(out, req->body, req->body_len, req->content_type);
        req->body = NULL;
        return true;
    }
    size_t len;
    char *json = gb__json_finish(&req->json, &len);
    if (!json) return error_answer(out, 500, "response too large; ask for fewer points");
    return body_answer(out, json, len, GB__JSON_TYPE);
}

static bool answer_api(gb__reader_pool *pool, const gb__head *head, gb__answer *out) {
    gb__request *req = calloc(1, sizeof *req);
    if (!req) return false;
    req->route = gb__find_route(head->path);
    if (!req->route) {
        free(req);
        return error_answer(out, 404, "no such API route");
    }
    int status = 400;
    if (params_valid(req, head)) {
        req->store = gb__pool_acquire(pool);
        gb__json_init(&req->json, GB__MAX_RESPONSE);
        status = req->store ? req->route->handle(req) : gb__fail(req, 503, "cannot open the store");
        gb__pool_release(pool, req->store);
    }
    bool ok = request_answer(req, status, out);
    gb__json_free(&req->json);
    free(req->body);
    free(req);
    return ok;
}

/* /api/events takes no parameters, and says so like every route does. */
static bool answer_events(const gb__head *head, gb__answer *out) {
    static const gb__route events = {.path = "events", .params = {GB__P_END}};
    gb__request *req = calloc(1, sizeof *req);
    if (!req) return false;
    req->route = &events;
    bool ok = params_valid(req, head);
    if (ok) *out = (gb__answer){.kind = GB__ANSWER_EVENTS, .status = 200};
    else ok = error_answer(out, 400, req->error);
    free(req);
    return ok;
}

/* "/" and /static/<name>: the files embedded at build time, by exact name. */
static bool answer_file(const char *path, gb__answer *out) {
    const char *name = !strcmp(path, "/") ? "index.html"
                       : !strncmp(path, "/static/", 8) ? path + 8 : NULL;
    const gb__static_file *f = name ? gb__find_static(name) : NULL;
    if (!f) return error_answer(out, 404, "not found");
    *out = (gb__answer){.kind = GB__ANSWER_FILE, .status = 200, .content_type = f->content_type,
                        .file = f};
    return true;
}

/* ---- the head -------------------------------------------------------------------------- */

/* Method, Host, then a NUL in the path: 0, or the status (message in msg). */
static int check_head(const gb__hosts *hosts, const gb__head *head, char *msg, size_t msg_size) {
    if (strcmp(head->method, "GET") && strcmp(head->method, "HEAD")) {
        snprintf(msg, msg_size, "only GET and HEAD are allowed");
        return 405;
    }
    int status = gb__check_host(hosts, head->host_count, head->host, head->version, msg, msg_size);
    if (status) return status;
    if (head->nul_in_path) {
        snprintf(msg, msg_size, "the path contains a NUL byte");
        return 400;
    }
    return 0;
}

/* ---- the token -------------------------------------------------------------------------- */

/* Appends s to buf (size bytes, *at used), percent-encoding all but
 * unreserved characters and those in `keep`; false when it does not fit. */
static bool put_encoded(char *buf, size_t size, size_t *at, const char *s, const char *keep) {
    static const char unreserved[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789-._~";
    for (; *s; s++) {
        bool plain = strchr(unreserved, *s) || strchr(keep, *s);
        int n = plain ? snprintf(buf + *at, size - *at, "%c", *s)
                      : snprintf(buf + *at, size - *at, "%%%02X", (unsigned char)*s);
        if (n < 0 || (size_t)n >= size - *at) return false;
        *at += (size_t)n;
    }
    return true;
}

/* The request's address without its token parameter (malloc'd; NULL when
 * out of memory or room). */
static char *address_without_token(const gb__head *head) {
    size_t size = GB__MAX_TARGET + 1, at = 0;
    char *loc = malloc(size);
    bool ok = loc && put_encoded(loc, size, &at, head->path, "/");
    const char *sep = "?";
    size_t shown = head->param_count < GB__HEAD_PARAMS ? head->param_count : GB__HEAD_PARAMS;
    for (size_t i = 0; ok && i < shown; i++) {
        if (!strcmp(head->param_name[i], "token")) continue;
        ok = put_encoded(loc, size, &at, sep, sep) &&
             put_encoded(loc, size, &at, head->param_name[i], "") &&
             (!head->param_value[i] || (put_encoded(loc, size, &at, "=", "=") &&
                                        put_encoded(loc, size, &at, head->param_value[i], "")));
        sep = "&";
    }
    if (ok) return loc;
    free(loc);
    return NULL;
}

/* The token in the address (NULL when none). */
static const char *token_param(const gb__head *head) {
    size_t shown = head->param_count < GB__HEAD_PARAMS ? head->param_count : GB__HEAD_PARAMS;
    for (size_t i = 0; i < shown; i++)
        if (!strcmp(head->param_name[i], "token")) return head->param_value[i] ? head->param_value[i] : "";
    return NULL;
}

/* The token's gate: false when the request was answered here (out set):
 * a redirect that sets the cookie for a right token in the address, 401
 * for a wrong one or none. */
static bool token_gate(const char *token, const gb__head *head, gb__answer *out, bool *made) {
    *made = true;
    const char *given = token_param(head);
    if (given && gb__token_equal(given, token)) {
        *out = (gb__answer){.kind = GB__ANSWER_LOGIN, .status = 302};
        *made = (out->body = address_without_token(head)) != NULL;
        return false;
    }
    if (given) {
        *made = error_answer(out, 401, "wrong token");
        return false;
    }
    if (gb__token_equal(head->token, token)) return true;
    static const char why[] = "this dashboard needs its token: open the address the server "
                              "printed (it ends in ?token=...)";
    if (!strncmp(head->path, "/api/", 5)) {
        *made = error_answer(out, 401, why);
        return false;
    }
    /* A person at the address bar: the reason as text, not JSON. */
    char *text = strdup("This glassbox dashboard needs its token: open the address the server "
                        "printed, which ends in ?token=...\n");
    *made = text && body_answer(out, text, strlen(text), "text/plain; charset=utf-8");
    out->status = 401;
    return false;
}

bool gb__answer_request(const gb__hosts *hosts, const char *token, gb__reader_pool *pool,
                        const gb__head *head, gb__answer *out) {
    char msg[320];
    int status = check_head(hosts, head, msg, sizeof msg);
    if (status) return error_answer(out, (unsigned)status, msg);
    bool made;
    if (token && *token && !token_gate(token, head, out, &made)) return made;
    if (!strcmp(head->path, "/api/events")) return answer_events(head, out);
    if (!strncmp(head->path, "/api/", 5) || !strcmp(head->path, "/api"))
        return answer_api(pool, head, out);
    return answer_file(head->path, out);
}
