/* append_alert.c — writes one numerics alert to a store and exits: the
 * Numerics page's browser test uses it to check that an alert written
 * while the page is open shows up, in its place, within 2 s.
 *   append_alert DB RUN STEP OP_TYPE OP_NAME
 * The alert says its op created one NaN from finite inputs. */
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: append_alert DB RUN STEP OP_TYPE OP_NAME\n");
        return 2;
    }
    gb_numerics_record r = {
        .op_type = argv[4], .op_name = argv[5], .nan_count = 1,
        .message = "written by append_alert",
        .detail_json = "{\"output_index\":0,\"dtype\":\"float32\",\"shape\":[1],\"first_index\":0,"
                       "\"created\":true,\"backward\":false,\"inputs\":[]}"};
    gb_summary_writer *w = NULL;
    int ok = gb_summary_writer_open(argv[1], argv[2], NULL, &w) == GB_OK &&
             gb_summary_numerics(w, &r, strtoll(argv[3], NULL, 10)) == GB_OK;
    if (w && gb_summary_writer_close(w) != GB_OK) ok = 0;
    if (!ok) fprintf(stderr, "append_alert: %s\n", gb_summary_last_error());
    return ok ? 0 : 1;
}
