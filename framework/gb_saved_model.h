/* gb_saved_model.h — SavedModel: traced functions and their variables in
 * a directory that runs without the C code that made them
 * (tf.saved_model.save / tf.saved_model.load).
 *
 *   gb_saved_model_signature sig = {
 *       .name = "serving_default", .function = predict,
 *       .inputs = (gb_tensor_spec[]){GB_SPEC("images", GB_F32, -1, 28, 28, 1)}, .ninputs = 1,
 *       .output_names = (const char *[]){"logits"}};
 *   gb_saved_model_save("fmnist_model", &sig, 1);
 *   ...                                               // in another program:
 *   gb_saved_model *m = gb_saved_model_load("fmnist_model");
 *   gb_tensor *logits;
 *   gb_saved_model_call(m, "serving_default", &images, 1, &logits);
 *
 * The directory holds saved_model.json (each signature's graph as traced,
 * node by node, with its inputs and outputs), variables/variables.ckpt
 * (an ordinary checkpoint: `glassbox checkpoint ls` lists it),
 * constants.ckpt (the graphs' constant values) and fingerprint.json (a
 * hash of each file and of the whole). Loading checks the fingerprint,
 * then every node: its op exists, its inputs come before it, its
 * attributes name variables the model has.
 *
 * A loaded signature is a gb_function whose C code replays the saved graph
 * through the dispatcher: its first call traces it (the passes and the
 * memory plan run again), later calls run the plan. Because the replay is
 * ordinary op calls, a tape sees through it: gradients flow to the loaded
 * variables, which an optimizer can train further.
 */
#ifndef GB_SAVED_MODEL_H
#define GB_SAVED_MODEL_H

#include "gb_function.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version written: 2 stores attributes by name (version 1,
 * their slots, still loads). */
#define GB_SAVED_MODEL_VERSION 2

/* One named entry point of a SavedModel: a function and the input
 * signature it is saved for (dims may be -1). */
typedef struct gb_saved_model_signature {
    const char *name;                  /* "serving_default" */
    gb_function *function;
    const gb_tensor_spec *inputs;
    int ninputs;
    const char *const *output_names;   /* NULL: "output_0", "output_1", ... */
} gb_saved_model_signature;

/* Traces each signature's function for its inputs (no statics) and writes
 * the directory, creating it if needed; files are replaced atomically.
 * gb_cond and gb_while_loop nodes are saved with their sub-graphs; a loop
 * traced under a GradientTape (which keeps every iteration for the
 * gradient) is refused, naming the loop. */
bool gb_saved_model_save(const char *dir, const gb_saved_model_signature *sigs, int nsigs);

typedef struct gb_saved_model gb_saved_model;

/* NULL after an error naming the file and what is wrong with it. */
gb_saved_model *gb_saved_model_load(const char *dir);
void gb_saved_model_free(gb_saved_model *m);

int gb_saved_model_signature_count(const gb_saved_model *m);
/* The i-th signature's name (in saved order); NULL when out of range. */
const char *gb_saved_model_signature_name(const gb_saved_model *m, int i);
/* A signature's inputs and outputs with names, dtypes and shapes (NULL
 * when there is no such signature); *n gets their count. */
const gb_tensor_spec *gb_saved_model_inputs(const gb_saved_model *m, const char *signature, int *n);
const gb_tensor_spec *gb_saved_model_outputs(const gb_saved_model *m, const char *signature, int *n);
/* Nodes of a signature's saved graph; -1 when there is no such signature. */
int gb_saved_model_node_count(const gb_saved_model *m, const char *signature);
/* The function that runs a signature (owned by m): call it, differentiate
 * through it, read its traces. NULL (error) for an unknown name. */
gb_function *gb_saved_model_function(gb_saved_model *m, const char *signature);
/* gb_function_call of that function. */
int gb_saved_model_call(gb_saved_model *m, const char *signature, gb_tensor *const *inputs,
                        int ninputs, gb_tensor **outputs);
/* The loaded variables (owned by m), in saved order. */
gb_variable *const *gb_saved_model_variables(gb_saved_model *m, int *n);
/* fingerprint.json's hash of the whole model, 16 hex digits. */
const char *gb_saved_model_fingerprint(const gb_saved_model *m);

#if !defined(GB_BUILDING_LIBRARY)
#define gb_saved_model_save(...) GB_AT(gb_saved_model_save, __VA_ARGS__)
#define gb_saved_model_load(...) GB_AT(gb_saved_model_load, __VA_ARGS__)
#define gb_saved_model_function(...) GB_AT(gb_saved_model_function, __VA_ARGS__)
#define gb_saved_model_call(...) GB_AT(gb_saved_model_call, __VA_ARGS__)
#define gb_saved_model_inputs(...) GB_AT(gb_saved_model_inputs, __VA_ARGS__)
#define gb_saved_model_outputs(...) GB_AT(gb_saved_model_outputs, __VA_ARGS__)
#define gb_saved_model_variables(...) GB_AT(gb_saved_model_variables, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
