/* pr_curves/dump.c — one precision-recall curve through the writer and the
 * reader, printed, for tests/pr_curves/sklearn_check.py to hold against
 * scikit-learn's precision_recall_curve on the same predictions.
 *
 *   pr_curve_dump STORE < examples
 *
 * stdin: "num_thresholds n" then n lines "label prediction weight". The
 * curve is written (float64 predictions, with weights) at step 1, read
 * back, and printed one threshold a line: tp fp tn fn precision recall,
 * each as %.17g so the checker compares exact doubles.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"
#include "glassbox.h"

static int fail(const char *what, const char *msg) {
    fprintf(stderr, "pr_curve_dump: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) return fail("usage", "pr_curve_dump STORE < examples");
    int thresholds;
    long n;
    if (scanf("%d %ld", &thresholds, &n) != 2 || n <= 0) return fail("stdin", "no header");
    double *v = malloc(3 * (size_t)n * sizeof *v);
    if (!v) return fail("memory", "out of memory");
    for (long i = 0; i < n; i++)
        if (scanf("%lf %lf %lf", &v[i], &v[n + i], &v[2 * n + i]) != 3)
            return fail("stdin", "a short example line");
    gb_summary_writer *w;
    if (gb_summary_writer_open(argv[1], "run", NULL, &w) != GB_OK)
        return fail("open", gb_summary_last_error());
    gb_scope_begin();
    int64_t shape[] = {n};
    gb_status st = gb_summary_pr_curve(w, "pr", gb_tensor_from(GB_F64, v, 1, shape),
                                       gb_tensor_from(GB_F64, v + n, 1, shape), thresholds,
                                       gb_tensor_from(GB_F64, v + 2 * n, 1, shape), 1);
    gb_scope_end();
    if (st != GB_OK) return fail("gb_summary_pr_curve", gb_summary_last_error());
    if (gb_summary_writer_close(w) != GB_OK) return fail("close", gb_summary_last_error());
    gb_store *s;
    gb_pr_curves *pr;
    if (gb_store_open(argv[1], &s) != GB_STORE_OK ||
        gb_store_pr_curves(s, "run", "pr", NULL, &pr) != GB_STORE_OK)
        return fail("read", gb_store_last_error());
    const gb_pr_curve_row *r = &pr->rows[0];
    for (size_t i = 0; i < r->num_thresholds; i++)
        printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", r->tp[i], r->fp[i], r->tn[i], r->fn[i],
               r->precision[i], r->recall[i]);
    gb_store_free(pr);
    gb_store_close(s);
    free(v);
    return 0;
}
