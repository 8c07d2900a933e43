/* writer/numerics_detail.c — an engine numerics alert as the JSON detail
 * the store keeps with it.
 *
 * The numerics table has a column for what every alert has (op, scope,
 * counts, message); the rest of gb_numerics_alert goes into its `detail`
 * column as one JSON object:
 *   {"output_index":0,"dtype":"float32","shape":[64,10],"first_index":197,
 *    "created":true,"backward":false,"forward_op_type":"",
 *    "inputs":[{"dtype":"float32","shape":[64,10],"min":0,"max":0.98,
 *               "nan_count":0,"inf_count":0}]}
 * (min/max null: no finite value). The store's reader parses exactly this
 * (store/numerics_detail.c, gb_numerics_detail in gb_reader.h): a field
 * added here is added there.
 */
#include <stdio.h>

#include "gb_debug.h"
#include "writer/internal.h"

void gb__numerics_detail_json(const gb_numerics_alert *a, char *out, size_t n) {
    gb__jtext storage = {out, 0, n, false, false}, *t = &storage;
    if (!n) return;
    out[0] = 0;
    gb__jtext_put(t, "{\"output_index\":%d,\"dtype\":", a->output_index);
    gb__jtext_string(t, gb_dtype_name(a->dtype));
    gb__jtext_put(t, ",\"shape\":");
    gb__jtext_shape(t, a->rank, a->shape);
    gb__jtext_put(t, ",\"first_index\":%lld,\"created\":%s,\"backward\":%s,\"forward_op_type\":",
        (long long)a->first_index, a->created ? "true" : "false", a->backward ? "true" : "false");
    gb__jtext_string(t, a->forward_op_type);
    gb__jtext_put(t, ",\"inputs\":[");
    for (int i = 0; i < a->ninputs && i < GB_NUMERICS_MAX_INPUTS; i++) {
        const gb_numerics_input *in = &a->inputs[i];
        gb__jtext_put(t, "%s{\"dtype\":", i ? "," : "");
        gb__jtext_string(t, gb_dtype_name(in->dtype));
        gb__jtext_put(t, ",\"shape\":");
        gb__jtext_shape(t, in->rank, in->shape);
        gb__jtext_put(t, ",\"min\":");
        gb__jtext_number(t, in->min);
        gb__jtext_put(t, ",\"max\":");
        gb__jtext_number(t, in->max);
        gb__jtext_put(t, ",\"nan_count\":%lld,\"inf_count\":%lld}", (long long)in->nan_count,
            (long long)in->inf_count);
    }
    gb__jtext_put(t, "]}");
    if (t->failed) t->buf[0] = 0;   /* truncated JSON is worse than none */
}

