/* fuzz_csv.c — the CSV parser (gb_dataset_from_csv_data) on arbitrary
 * bytes.
 *
 * Byte 0 picks the options, the rest is the file:
 *   bit 0    the file has a header
 *   bit 1    the delimiter is ';' (else ',')
 *   bits 2-3 the columns' dtype: float32, float64, int32, int64
 *   bit 4    read columns 1 and 0 (by index, column 1 with default "0")
 *            instead of every column
 *   bit 5    with a header and bit 4: choose column 0 by the name "a"
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused file gets an I/O error whose message starts with the name
 * standing for the file; an accepted one is a dataset whose cardinality
 * is the number of elements an iteration yields, each a scalar of the
 * chosen dtype per column.
 */
#include "fuzz_engine.h"

static const gb_dtype dtypes[4] = {GB_F32, GB_F64, GB_I32, GB_I64};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fuzz_begin();
    uint8_t flags = data[0];
    gb_dtype dt = dtypes[(flags >> 2) & 3];
    bool header = flags & 1, by_name = header && (flags & 32);
    gb_csv_column cols[2] = {{.index = 1, .dtype = dt, .default_value = "0"},
                             {.name = by_name ? "a" : NULL, .index = 0, .dtype = dt}};
    gb_csv_options o = {.header = header, .delimiter = flags & 2 ? ';' : ','};
    if (flags & 16) o.columns = cols, o.ncolumns = 2;
    gb_dataset *ds = gb_dataset_from_csv_data(data + 1, size - 1, "input", &o);
    if (!ds) {
        fuzz_check_refused("input");
    } else {
        int n = gb_dataset_num_components(ds);
        FUZZ_CHECK(n >= 1 && n <= GB_DATA_MAX_COMPONENTS, "%d components", n);
        FUZZ_CHECK(!o.ncolumns || n == o.ncolumns, "%d components for %d columns", n, o.ncolumns);
        int64_t card = gb_dataset_cardinality(ds), seen = 0;
        FUZZ_CHECK(card >= 0, "cardinality %lld", (long long)card);
        gb_iterator *it = gb_iterator_new(ds);
        gb_tensor *e[GB_DATA_MAX_COMPONENTS];
        while (gb_iterator_next(it, e)) {
            for (int k = 0; k < n; k++)
                FUZZ_CHECK(gb_rank(e[k]) == 0 && gb_tensor_dtype(e[k]) == (o.ncolumns ? dt : GB_F32),
                           "element %lld component %d", (long long)seen, k);
            seen++;
        }
        FUZZ_CHECK(gb_ok(), "iterating failed: %s", gb_error_string());
        FUZZ_CHECK(seen == card, "%lld elements, cardinality %lld", (long long)seen, (long long)card);
        gb_iterator_free(it);
        gb_dataset_free(ds);
    }
    fuzz_end();
    return 0;
}
