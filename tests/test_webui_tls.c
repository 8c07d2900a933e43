/* test_webui_tls.c — a board served over HTTPS (gb_board_options.tls_cert
 * and tls_key, `serve --cert --key`): a client that trusts the
 * certificate reads /api/runs through TLS; the token's cookie is Secure;
 * a plain HTTP request gets no HTTP answer; a missing half, a file with
 * no PEM block and a key that does not match are refused at start with
 * messages saying which. The certificate is made with openssl (installed
 * by the bootstrap); the client is node's https module, which checks the
 * chain and the address against the certificate. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_board.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

#define TOKEN "s3cret-Token_1"

static char db_path[512], dir[64], cert[128], key[128], other_key[128];

/* A self-signed certificate for 127.0.0.1 into cert/key (and a second
 * key, which matches nothing); false, said, when openssl cannot. */
static bool make_certificates(void) {
    snprintf(dir, sizeof dir, "%s/gb-tls-XXXXXX", P_tmpdir);
    if (!mkdtemp(dir)) return perror("mkdtemp"), false;
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(other_key, sizeof other_key, "%s/other.pem", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s 2>/dev/null && "
             "openssl genrsa -out %s 2048 2>/dev/null",
             key, cert, other_key);
    if (system(cmd) == 0) return true;
    fprintf(stderr, "test_webui_tls: openssl could not make a certificate (scripts/bootstrap.sh "
                    "installs it)\n");
    return false;
}

/* What node's https client got for path: "<status> <set-cookie> <body>",
 * trusting only cert; "error ..." when the request failed. */
static void https_get(int port, const char *path, char *out, size_t size) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "node -e \"const https=require('https'),fs=require('fs');"
             "https.get({host:'127.0.0.1',port:%d,path:'%s',ca:fs.readFileSync('%s'),"
             "headers:{Host:'127.0.0.1'}},r=>{let b='';r.on('data',d=>b+=d);"
             "r.on('end',()=>console.log(r.statusCode+' '+(r.headers['set-cookie']||['-'])[0]+' '+b))})"
             ".on('error',e=>console.log('error '+e.code))\" 2>&1",
             port, path, cert);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    pclose(p);
}

START_TEST(https_serves_and_the_cookie_is_secure) {
    gb_board *b = gb_board_start(db_path, NULL, 0,
                                 &(gb_board_options){.token = TOKEN, .tls_cert = cert, .tls_key = key});
    ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
    ck_assert_msg(strncmp(gb_board_url(b), "https://127.0.0.1:", 18) == 0, "%s", gb_board_url(b));
    char got[4096];
    https_get(gb_board_port(b), "/api/runs", got, sizeof got);
    ck_assert_msg(strncmp(got, "401 ", 4) == 0, "without the token: %s", got);
    https_get(gb_board_port(b), "/?token=" TOKEN, got, sizeof got);
    const char *login = "302 gb_token=" TOKEN "; Path=/; HttpOnly; SameSite=Strict; Secure ";
    ck_assert_msg(strncmp(got, login, strlen(login)) == 0, "logging in: %s", got);
    /* Plain HTTP on the HTTPS port: no HTTP answer. */
    http_response r = http_get(gb_board_port(b), "/api/runs");
    ck_assert_int_eq(r.status, 0);
    http_free(&r);
    gb_board_stop(b);
}
END_TEST

START_TEST(https_serves_the_api_on_loopback_without_a_token) {
    gb_board *b = gb_board_start(db_path, NULL, 0, &(gb_board_options){.tls_cert = cert, .tls_key = key});
    ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
    char got[8192];
    https_get(gb_board_port(b), "/api/runs", got, sizeof got);
    const char *runs = "200 - {\"runs\":[";
    ck_assert_msg(strncmp(got, runs, strlen(runs)) == 0, "%s", got);
    gb_board_stop(b);
}
END_TEST

START_TEST(bad_certificates_are_refused_at_start) {
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0, &(gb_board_options){.tls_cert = cert}));
    ck_assert_str_eq(gb_board_last_error(),
                     "HTTPS needs both a certificate and its key (--cert and --key)");
    char missing[160], not_pem[160];
    snprintf(missing, sizeof missing, "%s/none.pem", dir);
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0,
                                      &(gb_board_options){.tls_cert = missing, .tls_key = key}));
    ck_assert_msg(strstr(gb_board_last_error(), "none.pem': No such file or directory"), "%s",
                  gb_board_last_error());
    snprintf(not_pem, sizeof not_pem, "%s/plain.pem", dir);
    FILE *f = fopen(not_pem, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a certificate\n", f);
    fclose(f);
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0,
                                      &(gb_board_options){.tls_cert = cert, .tls_key = not_pem}));
    ck_assert_msg(strstr(gb_board_last_error(), "plain.pem' holds no PEM block"), "%s",
                  gb_board_last_error());
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0,
                                      &(gb_board_options){.tls_cert = cert, .tls_key = other_key}));
    ck_assert_msg(strstr(gb_board_last_error(), "(does the key match the certificate?)"), "%s",
                  gb_board_last_error());
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_tls");
    TCase *tc = tcase_create("tls");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, https_serves_and_the_cookie_is_secure);
    tcase_add_test(tc, https_serves_the_api_on_loopback_without_a_token);
    tcase_add_test(tc, bad_certificates_are_refused_at_start);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_tls_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
    int status = make_certificates() ? run_suite(suite()) : EXIT_FAILURE;
    webui_remove_store(db_path);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    return status;
}
