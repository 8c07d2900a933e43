/* train/custom_objects.c — what a model file names but cannot hold,
 * supplied by the program that loads it (Keras' custom_objects /
 * register_keras_serializable): custom losses by the name their
 * gb_loss_spec gives, metric objects by their class, each with the user
 * pointer its functions get. Layer types have their own registry in nn
 * (gb_register_module_type); this one holds the compile arguments.
 *
 * Entries live as long as the process, as registrations do in Keras;
 * registering a name again with the same function is harmless, with
 * another one an error (two meanings for one name in a file).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

typedef struct custom {
    char *name;
    gb_loss_fn loss;            /* a loss, or ... */
    gb_metric_factory metric;   /* ... a metric factory */
    void *user;
} custom;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static custom *table;
static int count, capacity;

/* The entry of name and kind (loss or metric), copied into *out. */
static bool lookup(const char *name, bool metric, custom *out) {
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count && !found; i++)
        if ((table[i].metric != NULL) == metric && strcmp(table[i].name, name) == 0) {
            *out = table[i];
            found = true;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

static bool add(const char *who, custom c) {
    custom known;
    if (lookup(c.name, c.metric != NULL, &known)) {
        if (known.loss == c.loss && known.metric == c.metric && known.user == c.user) return true;
        gb__error(GB_ERR_VALUE, NULL, "%s: another %s is already registered as '%s'", who,
                  c.metric ? "metric" : "loss", c.name);
        return false;
    }
    pthread_mutex_lock(&lock);
    bool ok = (c.name = strdup(c.name)) != NULL;
    if (ok && count == capacity) {
        int cap = capacity ? 2 * capacity : 8;
        custom *grown = realloc(table, (size_t)cap * sizeof *grown);
        if ((ok = grown != NULL)) table = grown, capacity = cap;
    }
    if (ok) table[count++] = c;
    pthread_mutex_unlock(&lock);
    if (!ok) {
        free(c.name);
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", who);
    }
    return ok;
}

bool gb_register_loss(const char *name, gb_loss_fn fn, void *user) {
    if (!name || !name[0] || !fn) {
        gb__error(GB_ERR_VALUE, NULL, "gb_register_loss: %s", !fn ? "the function is NULL" : "a name is required");
        return false;
    }
    return add("gb_register_loss", (custom){.name = (char *)name, .loss = fn, .user = user});
}

bool gb_register_metric(const char *class_name, gb_metric_factory make, void *user) {
    if (!class_name || !class_name[0] || !make) {
        gb__error(GB_ERR_VALUE, NULL, "gb_register_metric: %s",
                  !make ? "the factory is NULL" : "a class name is required");
        return false;
    }
    return add("gb_register_metric", (custom){.name = (char *)class_name, .metric = make, .user = user});
}

bool gb__custom_loss(const char *name, gb_loss_spec *spec) {
    custom c;
    if (!lookup(name, false, &c)) {
        gb__error(GB_ERR_VALUE, NULL,
                  "the custom loss '%s' is not registered; call gb_register_loss(\"%s\", fn, user) "
                  "before loading",
                  name, name);
        return false;
    }
    *spec = (gb_loss_spec){.kind = GB_LOSS_CUSTOM, .fn = c.loss, .user = c.user, .name = c.name};
    return true;
}

gb_metric *gb__custom_metric(const char *class_name, const char *name) {
    custom c;
    if (!lookup(class_name, true, &c)) {
        gb__error(GB_ERR_VALUE, NULL,
                  "metric '%s' is of class '%s', which is not registered; call "
                  "gb_register_metric(\"%s\", factory, user) before loading",
                  name, class_name, class_name);
        return NULL;
    }
    gb_metric *m = c.metric(name, c.user);
    if (!m && gb_ok())
        gb__error(GB_ERR_VALUE, NULL, "the factory of metric class '%s' made no metric", class_name);
    if (m && strcmp(gb_metric_name(m), name) != 0) {
        gb__error(GB_ERR_VALUE, NULL,
                  "the factory of metric class '%s' made a metric named '%s'; the file names it '%s'",
                  class_name, gb_metric_name(m), name);
        gb_metric_free(m);
        return NULL;
    }
    return m;
}
