/* cli/terminal.c — every line the `glassbox` program prints, made safe for
 * a terminal.
 *
 * Run names, tags, hyperparameters, paths, and the error messages quoting
 * them come from a store anyone may have written or from the command
 * line. Printed raw, an ESC or a C1 CSI would drive the terminal (colours,
 * the window title, on some its clipboard), a BEL ring it, and a newline
 * or CR forge lines of output. So each line is escaped visibly, and
 * without ambiguity:
 *   backslash       \\            newline, tab, CR   \n  \t  \r
 *   other C0, DEL   \xHH (ESC is \x1b, BEL \x07)
 *   C1 (U+0080..U+009F)           \u0080 .. \u009f
 *   a byte that is not UTF-8      \xHH
 * and valid UTF-8 text passes as it is. The data that export writes on
 * stdout is numbers only and does not come through here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "utf8.h"

/* The escape of code point cp (into buf), or NULL when it prints as is. */
static const char *escape_of(unsigned cp, char *buf, size_t size) {
    switch (cp) {
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    }
    if (!gb__is_control(cp)) return NULL;
    snprintf(buf, size, cp < 0x80 ? "\\x%02x" : "\\u%04x", cp);
    return buf;
}

/* Writes s to f, escaped. */
static void put_escaped(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len = gb_utf8_decode(p + i, n - i, &cp);
        char buf[16];
        const char *esc = len ? escape_of(cp, buf, sizeof buf) : buf;
        if (!len) snprintf(buf, sizeof buf, "\\x%02x", p[i]);
        if (esc) fputs(esc, f);
        else fwrite(p + i, 1, len, f);
        i += len ? len : 1;
    }
}

void gb__cli_vprint(FILE *f, const char *fmt, va_list ap) {
    char *line = NULL;
    if (vasprintf(&line, fmt, ap) < 0) {
        fputs("glassbox: out of memory\n", f);
        return;
    }
    put_escaped(f, line);
    fputc('\n', f);
    free(line);
}

void gb__cli_print(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gb__cli_vprint(f, fmt, ap);
    va_end(ap);
}
