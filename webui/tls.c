/* tls.c — reading a board's certificate and key (tls.h). */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PEM_MAX = 1 << 20 };

/* The file's text, or NULL with the reason in err. */
static char *read_pem(const char *what, const char *path, char *err, size_t err_size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    char *text = malloc(PEM_MAX + 1);
    size_t n = text ? fread(text, 1, PEM_MAX + 1, f) : 0;
    bool failed = ferror(f);
    fclose(f);
    const char *problem = !text ? "out of memory" : failed ? "cannot be read"
                          : n > PEM_MAX                 ? "is larger than 1 MiB"
                                                        : NULL;
    if (!problem) {
        text[n] = '\0';
        if (strlen(text) != n || !strstr(text, "-----BEGIN ")) problem = "holds no PEM block";
    }
    if (problem) {
        snprintf(err, err_size, "%s '%s' %s", what, path, problem);
        free(text);
        return NULL;
    }
    return text;
}

bool gb__tls_load(const char *cert_path, const char *key_path, gb__tls *tls, char *err,
                  size_t err_size) {
    *tls = (gb__tls){0};
    bool cert = cert_path && *cert_path, key = key_path && *key_path;
    if (!cert && !key) return true;
    if (cert != key) {
        snprintf(err, err_size, "HTTPS needs both a certificate and its key (--cert and --key)");
        return false;
    }
    tls->cert = read_pem("certificate", cert_path, err, err_size);
    tls->key = tls->cert ? read_pem("key", key_path, err, err_size) : NULL;
    if (tls->key) return true;
    gb__tls_free(tls);
    return false;
}

void gb__tls_free(gb__tls *tls) {
    free(tls->cert);
    if (tls->key) memset(tls->key, 0, strlen(tls->key)); /* a secret: not left in freed memory */
    free(tls->key);
    *tls = (gb__tls){0};
}
