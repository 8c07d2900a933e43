/* autodiff/internal.h — what the GradientTape's files share.
 *
 * A tape is a list of records (one per op call it watched) in a private
 * arena; tape.c owns the slots and the recording mask, record.c adds
 * records, backprop.c walks them backwards, jacobian.c and
 * custom_gradient.c build on both.
 */
#ifndef GB_AUTODIFF_INTERNAL_H
#define GB_AUTODIFF_INTERNAL_H

#include <stddef.h>

#include "ops/internal.h"

enum { MAX_TAPES = 64, CUSTOM_OP = -1 };

typedef struct tape_rec {
    int op;                       /* gb_op_id, or CUSTOM_OP */
    int nin, nout;
    gb_tensor **in, **out;
    gb_attrs attrs;
    struct gb_variable *var;      /* ReadVariableOp */
    gb_custom_backward_fn custom; /* CUSTOM_OP */
    void *custom_user;
    const char *name;             /* "<scope>/<Type>" for errors */
} tape_rec;


struct gb_tape {
    int slot;
    uint64_t bit;
    uint64_t start_id;
    int depth;                 /* scope depth the tape was begun in */
    int max_rec_depth;         /* deepest scope whose tensors it recorded */
    bool persistent, watch_accessed, used, recording, paused, in_gradient, expired;
    char expired_why[200];
    tape_rec **recs;
    int nrecs, caprecs;
    gb_bump mem;              /* the records */
    uint64_t *old_ids;         /* explicitly watched tensors older than the tape */
    int nold, capold;
    struct gb_variable **vars; /* watched variables, first-watched order */
    int nvars, capvars;
};

/* The live tapes of this thread by slot (a tensor's tape_bits index it). */
extern _Thread_local gb_tape *gb__tape_slots[MAX_TAPES];

/* ---- tape.c ---- */
/* Recomputes gb__tl_recording from the live tapes' states. */
void gb__tape_update_recording(void);
/* max_align_t-aligned bytes in the tape's arena; NULL after an error. */
void *gb__tape_alloc(gb_tape *t, size_t n);
/* Doubles *arr (of *cap elements of elem bytes); false after an error. */
bool gb__tape_grow(void **arr, int *cap, size_t elem);
/* Frees the records (a used non-persistent tape, an expired one). */
void gb__tape_drop_records(gb_tape *t);
/* False (with an error naming fn) for a NULL tape. */
bool gb__tape_usable(const gb_tape *t, const char *fn);
/* Whether tape t watches tensor x (its bit set and still meaningful). */
bool gb__tape_watches(const gb_tape *t, const gb_tensor *x);
bool gb__tape_var_watched(const gb_tape *t, const struct gb_variable *v);
void gb__tape_add_var(gb_tape *t, struct gb_variable *v);

/* ---- record.c ---- */
/* The recording tapes that should see this call. */
uint64_t gb__tape_tapes_for_call(const gb_op_call *c);
/* A new record on t named name, after the current name scope when in_scope
 * (name then outlives the tape: an op type, a custom gradient's name);
 * NULL after a memory error. */
tape_rec *gb__tape_new_record(gb_tape *t, int op, gb_tensor *const *in, int nin,
                              gb_tensor **out, int nout, const char *name, bool in_scope);
/* The dispatcher's record hook. */
void gb__tape_record(const gb_op_call *c, gb_tensor **out, int nout);

/* ---- backprop.c ---- */
/* A caller that acts on gradients while backward runs (dist/ starts an
 * allreduce of each bucket as soon as its gradients are final): `ready`
 * gets each source's final gradient (NULL: none) once, in the order they
 * become final — a variable's at its first read, as the walk goes
 * newest-first, the rest at the end; `between` runs after each record
 * of the walk (communication progress). Either may be NULL. */
typedef struct gb__grad_hook {
    void (*ready)(void *user, int source, gb_tensor *grad);
    void (*between)(void *user);
    void *user;
} gb__grad_hook;

typedef struct grad_request {
    gb_tensor *const *targets;
    int ntargets;
    gb_tensor *const *output_gradients;
    const gb_source *sources;
    int nsources;
    gb_unconnected unconnected;
    const gb__grad_hook *hook;    /* NULL: none */
} grad_request;
/* d(targets)/d(sources) into out[nsources]; false after an error. */
bool gb__tape_run_gradient(gb_tape *t, const grad_request *q, gb_tensor **out);
/* gb_tape_gradient_ex of one target with a hook (above). */
bool gb__tape_gradient_hooked(gb_tape *t, gb_tensor *target, const gb_source *sources,
                              int nsources, gb_unconnected unconnected, const gb__grad_hook *hook,
                              gb_tensor **out);
/* Marks a gradient call on t; false (error) for a second call on a
 * non-persistent tape. */
bool gb__tape_claim_use(gb_tape *t);

#endif
