/* utf8.h — the one UTF-8 decoder of the dashboard server and the
 * `glassbox` program: parameters are checked with it, JSON strings and
 * terminal output escaped with it, so they agree on what is valid text
 * and what is a control character. */
#ifndef GB_WEBUI_UTF8_H
#define GB_WEBUI_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Decodes the UTF-8 sequence at s (n > 0 bytes readable): its code point
 * into *cp and its length 1..4, or 0 when the bytes there are not UTF-8
 * (a stray or cut-short sequence, an overlong form, a surrogate, past
 * U+10FFFF). */
size_t gb__utf8_decode(const unsigned char *s, size_t n, unsigned *cp);

/* C0 controls, DEL and C1 controls: what a terminal may act on. */
static inline bool gb__is_control(unsigned cp) { return cp < 0x20 || (cp >= 0x7f && cp < 0xa0); }

#endif
