/* utf8.h — text as the dashboard server and the `glassbox` program see
 * it: the store's UTF-8 decoder (gb_reader.h; parameters are checked with
 * it, JSON strings and terminal output escaped with it) and what counts
 * as a control character. */
#ifndef GB_WEBUI_UTF8_H
#define GB_WEBUI_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_reader.h"

/* C0 controls, DEL and C1 controls: what a terminal may act on. */
static inline bool gb__is_control(unsigned cp) { return cp < 0x20 || (cp >= 0x7f && cp < 0xa0); }

#endif
