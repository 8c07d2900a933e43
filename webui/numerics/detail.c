/* numerics/detail.c — one numerics alert as the Numerics API's JSON.
 *
 * The row's columns go out as they are; its stored detail (a JSON text
 * the writer made) is parsed by the reader (gb_numerics_detail_parse)
 * and re-emitted field by field with the server's own JSON writer, so a
 * damaged or foreign detail degrades to nulls and never breaks a
 * response. The fields are listed in plugin.c.
 */
#include "board_internal.h"
#include "numerics/internal.h"

void gb__numerics_write_step(gb__json *j, int64_t step) {
    if (step == GB_STEP_NONE) gb__json_null(j);
    else gb__json_int(j, step);
}

/* dtype and shape of a tensor, null when unknown. */
static void write_tensor(gb__json *j, const gb_numerics_detail_tensor *t) {
    GB__JSON_KV(j, "dtype", str, t->dtype[0] ? t->dtype : NULL);
    gb__json_key(j, "shape");
    if (t->rank < 0) {
        gb__json_null(j);
        return;
    }
    gb__json_arr(j);
    for (int i = 0; i < t->rank; i++) gb__json_int(j, t->shape[i]);
    gb__json_arr_end(j);
}

static void write_output(gb__json *j, const gb_numerics_detail *d) {
    gb__json_key(j, "output");
    if (d->output_index < 0 && d->output.rank < 0 && !d->output.dtype[0]) {
        gb__json_null(j);
        return;
    }
    gb__json_obj(j);
    gb__json_key(j, "index");
    if (d->output_index < 0) gb__json_null(j);
    else gb__json_int(j, d->output_index);
    write_tensor(j, &d->output);
    gb__json_obj_end(j);
}

static void write_inputs(gb__json *j, const gb_numerics_detail *d) {
    gb__json_key(j, "inputs");
    gb__json_arr(j);
    for (int i = 0; i < d->ninputs; i++) {
        const gb_numerics_detail_input *in = &d->inputs[i];
        gb__json_obj(j);
        write_tensor(j, &in->tensor);
        GB__JSON_KV(j, "min", num, in->min);
        GB__JSON_KV(j, "max", num, in->max);
        GB__JSON_KV(j, "nan", int, in->nan_count);
        GB__JSON_KV(j, "inf", int, in->inf_count);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
}

void gb__numerics_write_alert(gb__json *j, const gb_numerics_row *r) {
    gb_numerics_detail d;
    gb_numerics_detail_parse(r->detail, &d);
    /* Without a detail, a named forward op still marks a backward alert. */
    bool backward = d.backward == GB_TRISTATE_UNKNOWN ? r->forward_op[0] != '\0' : d.backward == GB_TRISTATE_YES;
    gb__json_obj(j);
    GB__JSON_KV(j, "id", int, r->id);
    gb__json_key(j, "step");
    gb__numerics_write_step(j, r->step);
    GB__JSON_KV(j, "wall", time, r->wall_time);
    GB__JSON_KV(j, "op_type", str, r->op_type);
    GB__JSON_KV(j, "op_name", str, r->op_name);
    GB__JSON_KV(j, "scope", str, r->scope_path);
    GB__JSON_KV(j, "function", str, r->function);
    GB__JSON_KV(j, "direction", str, backward ? "backward" : "forward");
    GB__JSON_KV(j, "forward_op", str, r->forward_op);
    GB__JSON_KV(j, "forward_op_type", str, d.forward_op_type);
    GB__JSON_KV(j, "nan", int, r->nan_count);
    GB__JSON_KV(j, "posinf", int, r->posinf_count);
    GB__JSON_KV(j, "neginf", int, r->neginf_count);
    gb__json_key(j, "first_index");
    if (d.first_index < 0) gb__json_null(j);
    else gb__json_int(j, d.first_index);
    GB__JSON_KV(j, "origin", str,
                d.created == GB_TRISTATE_UNKNOWN ? NULL : d.created == GB_TRISTATE_YES ? "created" : "received");
    write_output(j, &d);
    write_inputs(j, &d);
    GB__JSON_KV(j, "message", str, r->message);
    gb__json_obj_end(j);
}
