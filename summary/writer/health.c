/* writer/health.c — a training-health alert (GB_EVENT_HEALTH) into the store.
 *
 * The engine's health checks (gb_health.h) report each finding as one
 * event whose detail is a gb_health_alert, valid during the call only:
 * the observer copies it into a queued event, each text bounded, so one
 * alert can never make a row the server would not send — texts longer
 * than GB_HEALTH_TEXT_MAX_BYTES are cut at a character and end in "...",
 * and figures that are longer than GB_HEALTH_FIGURES_MAX_BYTES or are
 * not one JSON object become "{}" (the value and threshold that tripped
 * the check have columns of their own, so the alert still says what
 * happened). The background thread inserts the row (commit.c).
 */
#include <stdlib.h>
#include <string.h>

#include "gb_health.h"
#include "writer/internal.h"

static const char ellipsis[] = "...";

/* s itself when within the bound, else its first characters and "..."
 * in buf (GB_HEALTH_TEXT_MAX_BYTES + 1 bytes). NULL stays NULL. */
static const char *bounded_text(const char *s, char *buf) {
    size_t n = s ? strlen(s) : 0;
    if (n <= GB_HEALTH_TEXT_MAX_BYTES) return s;
    size_t keep = GB_HEALTH_TEXT_MAX_BYTES - (sizeof ellipsis - 1);
    /* Back to the start of a character: never half a UTF-8 sequence. */
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
    memcpy(buf, s, keep);
    memcpy(buf + keep, ellipsis, sizeof ellipsis);
    return buf;
}

/* The figures as stored: one JSON object within its bound, else "{}". */
static const char *bounded_figures(const char *json) {
    if (!json || strlen(json) > GB_HEALTH_FIGURES_MAX_BYTES || !gb_json_is_value(json)) return "{}";
    json += strspn(json, " \t\r\n");
    return *json == '{' ? json : "{}";
}

void gb__writer_on_health(gb_summary_writer *w, const gb_event *ev) {
    const gb_health_alert *a = ev->detail;
    if (!a) return;
    static _Thread_local char texts[5][GB_HEALTH_TEXT_MAX_BYTES + 1];
    const char *s[6] = {
        bounded_text(a->kind && *a->kind ? a->kind : "unknown", texts[0]),
        bounded_text(a->layer, texts[1]),
        bounded_text(a->variable, texts[2]),
        bounded_figures(a->figures),
        bounded_text(ev->message, texts[3]),
        bounded_text(a->advice, texts[4]),
    };
    int64_t step;
    if (gb__writer_step("health", NULL, a->step, false, &step) != GB_OK) step = GB_STEP_NONE;
    size_t bytes;
    gb__health_payload *p = malloc(sizeof *p);
    gb__strings *text = gb__strings_new(6, s, &bytes);
    if (!p || !text) {
        free(p);
        free(text);
        return;
    }
    *p = (gb__health_payload){(int)a->severity, a->value, a->threshold, text};
    gb__event e = {.type = GB__EV_HEALTH, .step = step, .wall_time = ev->wall_time > 0 ? ev->wall_time : gb__wall_now(),
                   .payload = p};
    gb__writer_push(w, "health", NULL, GB_KIND_ANY, e, bytes + sizeof *p);
}
