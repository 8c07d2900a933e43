/* store/numerics_detail.c — reads the JSON detail stored with a numerics
 * alert (gb_numerics_detail_parse).
 *
 * The summary writer stores what has no column of its own as one JSON
 * object per alert (writer/numerics_detail.c writes it):
 *   {"output_index":0,"dtype":"float32","shape":[64,10],"first_index":197,
 *    "created":true,"backward":false,"forward_op_type":"",
 *    "inputs":[{"dtype":"float32","shape":[64,10],"min":0,"max":0.98,
 *               "nan_count":0,"inf_count":0}]}
 * (min/max null: no finite value). Readers get typed fields rather than
 * stored text, so the dashboard re-emits them with its own JSON writer and
 * a row written by another tool or damaged on disk can never make a
 * response invalid. The detail is read with store/json_parse.c: known
 * fields with their types checked, unknown ones skipped, anything
 * malformed rejecting the whole detail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_parse.h"

/* ---- the detail's fields -------------------------------------------------------- */

static bool shape_dim(gb__jp *ps, size_t i, void *ctx) {
    gb_numerics_detail_tensor *t = ctx;
    if (i >= GB_NUMERICS_DETAIL_MAX_RANK) return false;
    t->rank = (int)i + 1;
    return gb__jp_integer(ps, 0, INT64_MAX, &t->shape[i]);
}

static bool shape(gb__jp *ps, gb_numerics_detail_tensor *t) {
    t->rank = 0;
    return gb__jp_array(ps, shape_dim, t);
}

static bool input_member(gb__jp *ps, const char *key, void *ctx) {
    gb_numerics_detail_input *in = ctx;
    if (!strcmp(key, "dtype"))
        return gb__jp_string_into(ps, in->tensor.dtype, sizeof in->tensor.dtype);
    if (!strcmp(key, "shape")) return shape(ps, &in->tensor);
    if (!strcmp(key, "min")) return gb__jp_number(ps, &in->min, true);
    if (!strcmp(key, "max")) return gb__jp_number(ps, &in->max, true);
    if (!strcmp(key, "nan_count")) return gb__jp_integer(ps, 0, INT64_MAX, &in->nan_count);
    if (!strcmp(key, "inf_count")) return gb__jp_integer(ps, 0, INT64_MAX, &in->inf_count);
    return gb__jp_skip_value(ps);
}

static const gb_numerics_detail_tensor unknown_tensor = {.rank = -1};

static bool input(gb__jp *ps, size_t i, void *ctx) {
    gb_numerics_detail *d = ctx;
    /* summarized: the first ones */
    if (i >= GB_NUMERICS_DETAIL_MAX_INPUTS) return gb__jp_skip_value(ps);
    gb_numerics_detail_input *in = &d->inputs[i];
    *in = (gb_numerics_detail_input){unknown_tensor, NAN, NAN, 0, 0};
    d->ninputs = (int)i + 1;
    return gb__jp_object(ps, input_member, in);
}

static bool detail_member(gb__jp *ps, const char *key, void *ctx) {
    gb_numerics_detail *d = ctx;
    int64_t v;
    if (!strcmp(key, "output_index")) {
        if (!gb__jp_integer(ps, 0, 1 << 20, &v)) return false;
        d->output_index = (int)v;
        return true;
    }
    if (!strcmp(key, "dtype"))
        return gb__jp_string_into(ps, d->output.dtype, sizeof d->output.dtype);
    if (!strcmp(key, "shape")) return shape(ps, &d->output);
    if (!strcmp(key, "first_index")) return gb__jp_integer(ps, -1, INT64_MAX, &d->first_index);
    if (!strcmp(key, "created")) return gb__jp_boolean(ps, &d->created);
    if (!strcmp(key, "backward")) return gb__jp_boolean(ps, &d->backward);
    if (!strcmp(key, "forward_op_type"))
        return gb__jp_string_into(ps, d->forward_op_type, sizeof d->forward_op_type);
    if (!strcmp(key, "inputs")) {
        d->ninputs = 0;
        return gb__jp_array(ps, input, d);
    }
    return gb__jp_skip_value(ps);
}

static void unknown(gb_numerics_detail *d) {
    memset(d, 0, sizeof *d);
    d->output_index = -1;
    d->output = unknown_tensor;
    d->first_index = -1;
    d->created = GB_TRISTATE_UNKNOWN;
    d->backward = GB_TRISTATE_UNKNOWN;
}

bool gb_numerics_detail_parse(const char *json, gb_numerics_detail *out) {
    unknown(out);
    if (!json || !*json) return false;
    gb__jp ps = {json, 0};
    bool ok = gb__jp_object(&ps, detail_member, out);
    gb__jp_ws(&ps);
    if (ok && *ps.p == '\0') return true;
    unknown(out);
    return false;
}
