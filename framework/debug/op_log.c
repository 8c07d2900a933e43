/* debug/op_log.c — device placement logging and per-op timing.
 *
 * tf.debugging.set_log_device_placement prints each op and its device;
 * glassbox adds the instruction-set level its CPU kernels ran at
 * (core/isa.h), since one build runs different code on different CPUs;
 * op timing emits one GB_EVENT_OP per kernel with its duration. Both run
 * after the kernel through the dispatcher's op-log hook, installed here
 * when either is turned on, so they cost nothing while off. The profiler
 * (profiler.c) records through the same hook and the same kernel time,
 * so its op times are exactly the ones op timing stores.
 */
#include <stdio.h>

#include "debug/internal.h"

static const char *const cpu_device = "/job:localhost/replica:0/task:0/device:CPU:0";

static void log_op(const gb_op_call *c, gb_tensor *const *out, int nout, double t0, double us) {
    char name[160];
    unsigned flags = atomic_load_explicit(&gb__hook_flags, memory_order_relaxed);
    if (flags & GB_HOOK_PLACEMENT) {
        gb__op_display_name(c, name, sizeof name);
        char msg[320];
        snprintf(msg, sizeof msg, "Executing op %s in device %s (kernels: %s)", c->def->name,
                 cpu_device, gb_cpu_isa());
        fprintf(stderr, "%s\n", msg);
        gb_event ev = {.kind = GB_EVENT_PLACEMENT, .op_type = c->def->name, .op_name = name,
                       .device = cpu_device, .message = msg};
        gb_observer_emit(&ev);
    }
    if (flags & GB_HOOK_TIMING) {
        gb__op_display_name(c, name, sizeof name);
        gb_op_event in = {.function = gb__tl_function};
        gb_event ev = {.kind = GB_EVENT_OP, .op_type = c->def->name, .op_name = name,
                       .device = cpu_device, .message = c->def->name, .duration_us = us,
                       .detail = &in};
        gb_observer_emit(&ev);
    }
    if (flags & GB_HOOK_PROFILE) gb__profile_op(c, out, nout, t0, us);
}

static void set_logging(unsigned flag, bool on) {
    if (on) atomic_store_explicit(&gb__op_log_hook, log_op, memory_order_release);
    gb__hook_flag_set(flag, on);
}

void gb_set_log_device_placement(bool on) { set_logging(GB_HOOK_PLACEMENT, on); }

void gb_set_op_timing(bool on) { set_logging(GB_HOOK_TIMING, on); }

void gb__set_op_profiling(bool on) { set_logging(GB_HOOK_PROFILE, on); }
