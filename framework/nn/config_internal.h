/* nn/config_internal.h — the config tree's layout, shared by its builder
 * (config.c) and its JSON text (config_json.c).
 */
#ifndef GB_NN_CONFIG_INTERNAL_H
#define GB_NN_CONFIG_INTERNAL_H

#include "nn/internal.h"

struct gb_config {
    gb_config_kind kind;
    bool b;
    int64_t i;
    double d;
    char *str;
    int n, cap;               /* lists and dicts */
    gb_config **items;
    char **keys;              /* dicts: one per item */
    /* Looked up by gb_config_get (bookkeeping, so set through a const
     * tree): from_config refuses a key no reader looked up, so a
     * misspelled or unsupported key is an error, not silently dropped. */
    bool looked_up;
};

/* The first key of dict c (or of a dict under it) that no reader looked
 * up, or NULL. */
const char *gb__config_unread_key(const gb_config *c);

/* Appends v to a list, or under key to a dict; takes v, also on failure. */
gb_config *gb__config_attach(gb_config *parent, const char *key, gb_config *v);

#endif
