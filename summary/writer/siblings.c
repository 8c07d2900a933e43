/* writer/siblings.c — runs beside a writer's own, for engine scalars that
 * name one (gb_scalar_event.run).
 *
 * Data-parallel training emits every rank's step and allreduce times on
 * rank 0 under runs "rank_0", "rank_1", ...: the writer stores them as
 * runs "<its run>/rank_<r>", so the Scalars page, which overlays runs in
 * one chart per tag, shows the ranks side by side and a straggler stands
 * out. Each sibling is an ordinary writer on the same store (its own
 * connection and commit thread), opened on first use with the same
 * options, flushed and closed with the writer that owns it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

gb_summary_writer *gb__writer_sibling(gb_summary_writer *w, const char *name) {
    size_t base = strlen(w->run);
    gb_summary_writer *found = NULL;
    pthread_mutex_lock(&w->siblings_lock);
    for (int i = 0; i < w->nsiblings && !found; i++)
        if (!strcmp(w->siblings[i]->run + base + 1, name)) found = w->siblings[i];
    if (!found) {
        char run[512];
        snprintf(run, sizeof run, "%s/%s", w->run, name);
        gb_summary_writer **grown = realloc(w->siblings, (size_t)(w->nsiblings + 1) * sizeof *grown);
        if (grown) w->siblings = grown;
        gb_summary_options opt = w->opt;
        opt.new_run = false;   /* a sibling belongs to this run, fresh or continued */
        if (grown && gb_summary_writer_open(w->path, run, &opt, &found) == GB_OK)
            w->siblings[w->nsiblings++] = found;
    }
    pthread_mutex_unlock(&w->siblings_lock);
    return found;
}

gb_status gb__writer_siblings_flush(gb_summary_writer *w) {
    gb_status first = GB_OK;
    pthread_mutex_lock(&w->siblings_lock);
    for (int i = 0; i < w->nsiblings; i++) {
        gb_status st = gb_summary_flush(w->siblings[i]);
        if (first == GB_OK) first = st;
    }
    pthread_mutex_unlock(&w->siblings_lock);
    return first;
}

gb_status gb__writer_siblings_close(gb_summary_writer *w) {
    gb_status first = GB_OK;
    for (int i = 0; i < w->nsiblings; i++) {
        gb_status st = gb_summary_writer_close(w->siblings[i]);
        if (first == GB_OK) first = st;
    }
    free(w->siblings);
    w->siblings = NULL;
    w->nsiblings = 0;
    return first;
}
