/* tls.h — the certificate and key a board serves HTTPS with
 * (gb_board_options.tls_cert / tls_key, `serve --cert --key`).
 *
 * libmicrohttpd's GnuTLS support takes both as PEM text in memory; they
 * are read here, bounded, and checked to be PEM before the daemon starts,
 * so a wrong path or file gets its own message rather than "cannot start
 * the HTTP server". Whether the pair matches, GnuTLS says at start. */
#ifndef GB_WEBUI_TLS_H
#define GB_WEBUI_TLS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gb__tls {
    char *cert, *key;   /* PEM text, NUL-terminated; both NULL: plain HTTP */
} gb__tls;

/* Reads cert_path and key_path (both NULL or empty: plain HTTP, true).
 * False with the reason in err when only one is given, or a file cannot
 * be read, is larger than 1 MiB or holds no PEM block. */
bool gb__tls_load(const char *cert_path, const char *key_path, gb__tls *tls, char *err,
                  size_t err_size);
void gb__tls_free(gb__tls *tls);

#endif
