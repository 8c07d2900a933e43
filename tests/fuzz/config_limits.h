/* config_limits.h — for fuzz targets that build what a config describes
 * (layers, models): whether every number in it is small, so building it
 * allocates little. A config of Dense(units=1e12) is a valid request
 * that would exhaust memory, which is no finding; a target gives such
 * configs only to the parser.
 */
#ifndef GB_FUZZ_CONFIG_LIMITS_H
#define GB_FUZZ_CONFIG_LIMITS_H

#include <math.h>
#include <stdbool.h>

#include "glassbox.h"

/* Every integer and number in c within [-64, 64]. */
static inline bool config_small_values(const gb_config *c) {
    if (gb_config_is_number(c)) return fabs(gb_config_number(c)) <= 64;
    for (int i = 0; i < gb_config_len(c); i++)
        if (!config_small_values(gb_config_at(c, i))) return false;
    return true;
}

#endif
