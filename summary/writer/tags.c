/* writer/tags.c — interning tags on the callers' side of the writer.
 *
 * Each summary call names its tag; the queue carries a small index
 * instead of the string so a scalar event stays a fixed-size record. The
 * table is an open-addressing hash of (name, kind) -> index, guarded by
 * the writer's lock; interned tags are never moved or changed, so the
 * background thread may keep pointers to them.
 */
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

static uint32_t hash_tag(const char *name, gb_summary_kind kind) {
    uint32_t h = 2166136261u ^ (uint32_t)kind;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    return h;
}

static bool grow_slots(gb_summary_writer *w) {
    int cap = w->tag_slots_cap ? 2 * w->tag_slots_cap : 64;
    int32_t *slots = calloc((size_t)cap, sizeof *slots);
    if (!slots) return false;
    for (int i = 0; i < w->ntags; i++) {
        uint32_t j = w->tags[i]->hash & (uint32_t)(cap - 1);
        while (slots[j]) j = (j + 1) & (uint32_t)(cap - 1);
        slots[j] = i + 1;
    }
    free(w->tag_slots);
    w->tag_slots = slots;
    w->tag_slots_cap = cap;
    return true;
}

static int add_tag(gb_summary_writer *w, const char *name, gb_summary_kind kind, uint32_t h) {
    if (w->ntags == w->tags_cap) {
        int cap = w->tags_cap ? 2 * w->tags_cap : 16;
        gb__wtag **tags = realloc(w->tags, (size_t)cap * sizeof *tags);
        if (!tags) return -1;
        w->tags = tags;
        w->tags_cap = cap;
    }
    gb__wtag *t = malloc(sizeof *t);
    char *copy = strdup(name);
    if (!t || !copy) {
        free(t);
        free(copy);
        return -1;
    }
    *t = (gb__wtag){copy, kind, h};
    w->tags[w->ntags] = t;
    return w->ntags++;
}

int gb__writer_tag(gb_summary_writer *w, const char *name, gb_summary_kind kind) {
    if (2 * (w->ntags + 1) > w->tag_slots_cap && !grow_slots(w)) return -1;
    uint32_t h = hash_tag(name, kind), mask = (uint32_t)(w->tag_slots_cap - 1);
    uint32_t j = h & mask;
    for (; w->tag_slots[j]; j = (j + 1) & mask) {
        const gb__wtag *t = w->tags[w->tag_slots[j] - 1];
        if (t->hash == h && t->kind == kind && !strcmp(t->name, name)) return w->tag_slots[j] - 1;
    }
    int i = add_tag(w, name, kind, h);
    if (i >= 0) w->tag_slots[j] = i + 1;
    return i;
}

void gb__writer_tags_free(gb_summary_writer *w) {
    for (int i = 0; i < w->ntags; i++) {
        free(w->tags[i]->name);
        free(w->tags[i]);
    }
    free(w->tags);
    free(w->tag_slots);
}
