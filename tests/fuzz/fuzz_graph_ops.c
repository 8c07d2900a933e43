/* fuzz_graph_ops.c — random small programs of random ops, on random
 * shapes and attributes, through the one dispatcher: eagerly, then traced
 * into a graph (the passes, the memory plan, the executor) and called,
 * then, when the input asks, saved as a SavedModel, loaded and called.
 *
 * The input is read as a program: a few input tensors (a dtype, strings
 * included, a rank up to 4, dims up to 6, values from the input's bytes), then up to eight
 * steps, each an op of ops.def with inputs picked from the tensors made so
 * far and every attribute slot filled from the input — small numbers,
 * negative ones and the ends of int64, as a hostile file could give. The
 * ops that exist only in graphs (Placeholder, Const, FusedElementwise, If,
 * While) and Print (which would print) are not drawn.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; an
 * op that refuses its inputs or attributes says so with an error naming
 * it, eagerly and traced alike (the trace runs the same shape checks);
 * a program that runs eagerly gives, traced, the same outputs bit for
 * bit when it draws no random numbers (the trace skips the steps eager
 * refused, which may refuse only on values); and a traced program that saves
 * loads again (whatever save accepts, load accepts) and gives those
 * outputs too. A step whose output would exceed
 * 2^16 elements is skipped before it allocates (its shape is inferred
 * first), so memory stays bounded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_engine.h"
#include "ops/internal.h"

enum { MAX_INPUTS = 4, MAX_STEPS = 8, MAX_VALUES = 32, MAX_ELEMS = 1 << 16 };

/* The input, read front to back; zeros once it is used up. */
typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t byte(reader *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

/* An attribute integer: mostly small, sometimes hostile. */
static int64_t attr_int(reader *r) {
    uint8_t b = byte(r);
    switch (b >> 5) {
    case 0: return INT64_MAX - (b & 3);
    case 1: return INT64_MIN + (b & 3);
    case 2: return -(int64_t)(b & 15);
    case 3: return (int64_t)1 << (b & 31);
    default: return b & 15;
    }
}

static double attr_double(reader *r) {
    static const double specials[] = {0, 1, -1, 0.5, 1e-300, 1e300, NAN, INFINITY};
    uint8_t b = byte(r);
    return b < 8 ? specials[b] : (double)(int8_t)b / 8;
}

/* A string tensor of these dims: its first elements up to 4 bytes each
 * from the input (any bytes: NUL, stray UTF-8), the rest empty. */
static gb_tensor *make_strings(reader *r, int rank, const int64_t *dims) {
    enum { MAX_ELEMS_STR = 6 * 6 * 6 * 6 };
    static char bytes[MAX_VALUES][4];
    gb_string el[MAX_ELEMS_STR] = {{0}};
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    for (int64_t i = 0; i < n && i < MAX_VALUES; i++) {
        el[i] = (gb_string){bytes[i], byte(r) % 5};
        for (int64_t k = 0; k < el[i].len; k++) bytes[i][k] = (char)byte(r);
    }
    for (int64_t i = MAX_VALUES; i < n; i++) el[i] = (gb_string){"", 0};
    return gb_strings_from(el, rank, dims);
}

/* A tensor of the dtype, rank and dims the input gives, holding values
 * from its bytes. */
static gb_tensor *make_input(reader *r) {
    static const gb_dtype dtypes[] = {GB_F32, GB_F64, GB_I32, GB_I64, GB_U8, GB_BOOL, GB_STRING};
    gb_dtype dt = dtypes[byte(r) % 7];
    int rank = byte(r) % 5;
    int64_t dims[4];
    for (int d = 0; d < rank; d++) dims[d] = byte(r) % 7;
    if (dt == GB_STRING) return make_strings(r, rank, dims);
    gb_tensor *t = gb_zeros(dt, rank, dims);
    if (!t) return NULL;
    int64_t n = gb_size(t);
    for (int64_t i = 0; i < n && i < MAX_VALUES; i++) {
        /* Values every dtype holds: floats any (NaN and infinities too),
         * integers a signed byte's, u8 and bool their own. */
        double v = gb_dtype_is_float(dt) ? attr_double(r)
                   : dt == GB_BOOL       ? byte(r) & 1
                   : dt == GB_U8         ? byte(r)
                                         : (double)(int8_t)byte(r);
        gb__store(dt, t->data, i, v);
    }
    return t;
}

/* One step of the program: the op and its attributes, and which tensors
 * it takes (indices into the pool). */
typedef struct step {
    gb_op_id op;
    int nin;
    int in[4];
    gb_attrs attrs;
} step;

static bool drawable(gb_op_id op) {
    return op != GB_OP_PLACEHOLDER && op != GB_OP_CONST && op != GB_OP_FUSED_ELEMENTWISE &&
           op != GB_OP_IF && op != GB_OP_WHILE && op != GB_OP_PRINT;
}

static bool read_step(reader *r, int pool, step *s) {
    *s = (step){.op = (gb_op_id)(byte(r) % GB_OP_COUNT)};
    if (!drawable(s->op) || pool == 0) return false;
    int arity = gb_op_table[s->op]->arity;
    s->nin = arity >= 0 ? arity : 1 + byte(r) % 3;
    if (s->nin > 4) return false;
    for (int k = 0; k < s->nin; k++) s->in[k] = byte(r) % pool;
    s->attrs.ni = byte(r) % (GB_MAX_ATTR_INTS + 1);
    for (int k = 0; k < s->attrs.ni; k++) s->attrs.i[k] = attr_int(r);
    for (int k = 0; k < 4; k++) s->attrs.f[k] = attr_double(r);
    int len = byte(r) % 8;
    for (int k = 0; k < len; k++) s->attrs.s[k] = (char)('a' + byte(r) % 26);
    s->attrs.nvars = byte(r) % 2;
    s->attrs.vars[0] = attr_int(r);
    return true;
}

/* The program: its inputs and steps, as read. */
typedef struct program {
    int ninputs, nsteps;
    gb_tensor *inputs[MAX_INPUTS];
    step steps[MAX_STEPS];
    bool random;   /* draws random numbers: traced runs draw anew */
    bool save;     /* also through a SavedModel */
    bool skip[MAX_STEPS];   /* too big to make, or refused eagerly: skipped by the trace */
    int refused;            /* steps the last run refused */
} program;

/* Whether the step's outputs are small enough to make: inferred first,
 * as the dispatcher will, so a step asking for 2^40 elements is skipped
 * instead of allocating them. An op that refuses its inputs passes (its
 * refusal is what the run will check). */
static bool small_enough(const step *s, gb_tensor *const *in) {
    gb_op_call c = {s->op, gb_op_table[s->op], in, s->nin, &s->attrs, NULL};
    gb_out_desc desc[GB_MAX_OUTPUTS];
    for (int k = 0; k < s->nin; k++)
        if (!in[k]) return false;
    int n = gb_op_table[s->op]->infer(&c, desc);
    gb_clear_error();
    for (int k = 0; k < n; k++) {
        double elems = 1;
        for (int d = 0; d < desc[k].rank; d++) elems *= desc[k].shape[d] < 0 ? 1 : (double)desc[k].shape[d];
        if (elems > MAX_ELEMS) return false;
    }
    return true;
}

/* Runs the program on `inputs` (eager tensors, or a trace's symbolic
 * ones): every step not skipped, its outputs joining the pool (the eager
 * run decides which steps are too big: traced shapes may be unknown).
 * Returns the pool's size; a refused step leaves an error naming its op,
 * checked, cleared and counted. */
static int run_program(program *p, gb_tensor *const *inputs, gb_tensor **pool, bool traced) {
    int n = 0;
    p->refused = 0;
    for (int i = 0; i < p->ninputs; i++) pool[n++] = inputs[i];
    for (int s = 0; s < p->nsteps; s++) {
        const step *st = &p->steps[s];
        gb_tensor *in[4], *out[GB_MAX_OUTPUTS];
        for (int k = 0; k < st->nin; k++) in[k] = pool[st->in[k] % n];
        if (!traced) p->skip[s] = !small_enough(st, in);
        if (p->skip[s]) continue;
        int got = gb__dispatch(st->op, in, st->nin, &st->attrs, out);
        if (got < 0) {
            const gb_error *e = gb_last_error();
            FUZZ_CHECK(e && e->message[0], "%s refused without a message", gb_op_type_name(st->op));
            gb_clear_error();
            p->refused++;
            /* A refusal that depends on values (an index out of range)
             * does not happen when tracing: the trace skips the step, so
             * both programs keep the same tensors and steps after it
             * take the same inputs. */
            if (!traced) p->skip[s] = true;
            continue;
        }
        for (int k = 0; k < got && n < MAX_INPUTS + MAX_STEPS * GB_MAX_OUTPUTS; k++)
            if (out[k]) pool[n++] = out[k];
    }
    return n;
}

/* The traced side: the same program on the function's symbolic inputs,
 * returning the last tensor it made (or its first input). */
static int traced_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_tensor *pool[MAX_INPUTS + MAX_STEPS * GB_MAX_OUTPUTS];
    int n = run_program(user, in, pool, true);
    out[0] = pool[n - 1];
    return 1;
}

/* Same dtype, shape and values: bit for bit, and strings byte for byte
 * (their elements are pointers into different memory). */
static bool same_values(const gb_tensor *a, const gb_tensor *b) {
    if (gb_tensor_dtype(a) != gb_tensor_dtype(b) || !gb_same_shape(a, b)) return false;
    if (gb_tensor_dtype(a) != GB_STRING) return memcmp(gb_data(a), gb_data(b), gb_nbytes(a)) == 0;
    for (int64_t i = 0; i < gb_size(a); i++) {
        gb_string x = gb_get_string(a, i), y = gb_get_string(b, i);
        if (x.len != y.len || (x.len && memcmp(x.data, y.data, (size_t)x.len))) return false;
    }
    return true;
}

static void read_program(reader *r, program *p) {
    uint8_t head = byte(r);
    *p = (program){.ninputs = 1 + head % MAX_INPUTS, .save = (head & 0x80) != 0};
    for (int i = 0; i < p->ninputs; i++) {
        p->inputs[i] = make_input(r);
        FUZZ_CHECK(p->inputs[i] != NULL, "an input of at most 6^4 elements: %s", gb_error_string());
    }
    int pool = p->ninputs;
    for (int s = 0; s < MAX_STEPS && r->n; s++) {
        step *st = &p->steps[p->nsteps];
        if (!read_step(r, pool, st)) continue;
        p->random |= (gb_op_table[st->op]->flags & GB_OPF_RANDOM) != 0;
        p->nsteps++;
        pool += 1;
    }
}

/* The directory SavedModels are written to: one per process, in memory
 * where the machine has /dev/shm (a save per input is then cheap),
 * removed at exit. */
static char model_dir[64];

static void remove_model_dir(void) {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", model_dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", model_dir);
}

static const char *saved_model_dir(void) {
    if (!model_dir[0]) {
        snprintf(model_dir, sizeof model_dir, "/dev/shm/gb-fuzz-graph-ops-XXXXXX");
        if (!mkdtemp(model_dir)) snprintf(model_dir, sizeof model_dir, "/tmp/gb-fuzz-graph-ops-XXXXXX");
        FUZZ_CHECK(model_dir[0] == '/' && (strstr(model_dir, "XXXXXX") == NULL || mkdtemp(model_dir)),
                   "no temporary directory");
        atexit(remove_model_dir);
    }
    return model_dir;
}

/* Saves the traced program as a SavedModel, loads it and calls it: what
 * saves must load, and give the eager result bit for bit. */
static void through_saved_model(gb_function *f, const program *p, const gb_tensor *eager) {
    gb_tensor_spec specs[MAX_INPUTS];
    for (int i = 0; i < p->ninputs; i++) {
        specs[i] = (gb_tensor_spec){.dtype = gb_tensor_dtype(p->inputs[i]), .rank = gb_rank(p->inputs[i])};
        for (int d = 0; d < specs[i].rank; d++) specs[i].shape[d] = gb_dim(p->inputs[i], d);
    }
    gb_saved_model_signature sig = {.name = "serving_default", .function = f, .inputs = specs,
                                    .ninputs = p->ninputs};
    const char *dir = saved_model_dir();
    if (!gb_saved_model_save(dir, &sig, 1)) {
        const gb_error *e = gb_last_error();
        FUZZ_CHECK(e && e->message[0], "a SavedModel refused without a message");
        gb_clear_error();
        return;
    }
    gb_saved_model *m = gb_saved_model_load(dir);
    FUZZ_CHECK(m != NULL, "a SavedModel that saved does not load: %s", gb_error_string());
    gb_tensor *out = NULL;
    FUZZ_CHECK(gb_saved_model_call(m, "serving_default", p->inputs, p->ninputs, &out) == 1,
               "a loaded SavedModel does not run: %s", gb_error_string());
    FUZZ_CHECK(same_values(out, eager), "a loaded SavedModel's result differs from eager");
    gb_saved_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    reader r = {data, size};
    program p;
    read_program(&r, &p);
    gb_tensor *pool[MAX_INPUTS + MAX_STEPS * GB_MAX_OUTPUTS];
    int n = run_program(&p, p.inputs, pool, false);
    gb_tensor *eager = pool[n - 1];
    int eager_refused = p.refused;

    /* Traced, skipping the steps the eager run found too big, so the
     * graph allocates nothing large either. */
    gb_function *f = gb_function_new("fuzz_program", traced_body, &(gb_function_options){.user = &p});
    FUZZ_CHECK(f != NULL, "%s", gb_error_string());
    gb_tensor *traced = NULL;
    if (gb_function_call(f, p.inputs, p.ninputs, NULL, 0, &traced) < 0) {
        const gb_error *e = gb_last_error();
        FUZZ_CHECK(e && e->message[0], "a traced program refused without a message");
        gb_clear_error();
    } else if (!p.random && !eager_refused && !p.refused) {
        /* Both ran every step: the graph computes what eager did. */
        FUZZ_CHECK(same_values(traced, eager), "traced and eager results differ");
        if (p.save) through_saved_model(f, &p, eager);
    }
    gb_function_free(f);
    fuzz_end();
    return 0;
}
