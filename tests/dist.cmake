# Data-parallel training under mpirun (when CMake found MPI; the job of one
# is unit-tested in test_dist.c either way). Loopback only: shared memory
# between the ranks (btl self,vader), oversubscribed so two ranks run on
# any machine, allowed as root (the OMPI_ALLOW_RUN_AS_ROOT* variables are
# mpirun's --allow-run-as-root), leak checks off under ASan (Open MPI keeps
# its allocations to exit).
#   dist_equivalence_*  2 ranks at batch 64 train the weights of 1 process
#                       at batch 128 over 50 steps (tests/dist_equivalence.c
#                       says how, and why the tolerances)
foreach(prog dist_equivalence dist/silent_rank dist/health_ranks)
  get_filename_component(name ${prog} NAME_WE)
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${prog}.c)
  target_link_libraries(${name} PRIVATE glassbox_framework)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endforeach()

if(NOT MPI_C_FOUND OR NOT GB_MPIRUN)
  return()
endif()

set(GB_MPIRUN_FLAGS --oversubscribe --bind-to none --mca btl self,vader)
set(GB_MPI_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")

# A test running `mpirun -np NP` COMMAND...; its ranks count as NP of
# ctest's processors.
function(gb_mpi_test name np)
  add_test(NAME ${name} COMMAND ${GB_MPIRUN} ${GB_MPIRUN_FLAGS} -np ${np} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${GB_MPI_TEST_ENV}" PROCESSORS ${np}
                                          TIMEOUT 300 LABELS mpi)
endfunction()

# The same, the output required to hold every TEXT (expect_output.sh):
#   gb_mpi_expect(name np COMMAND... -- TEXT...)
function(gb_mpi_expect name np)
  add_test(NAME ${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/expect_output.sh
                   ${GB_MPIRUN} ${GB_MPIRUN_FLAGS} -np ${np} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${GB_MPI_TEST_ENV}" PROCESSORS ${np}
                                          TIMEOUT 300 LABELS mpi)
endfunction()

gb_mpi_test(dist_equivalence_sgd 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --steps 50 --global-batch 128 --optimizer sgd --tolerance 1e-5)
# The tolerances (dist_equivalence.c says more): every step's averaged
# gradient equals the global batch's at the same weights within 1e-6
# (rounding; measured 2.4e-7). The weights: SGD carries a step's rounding
# (3.7e-8 at the first) along linearly, 50 steps of lr 0.05 with momentum
# 0.9 (effective rate 0.5) at most 50 * 0.5 * 4e-8 = 1e-6 (measured
# 3.9e-7): 1e-5 leaves a margin of ten, yet sits four orders below what a
# real fault gives (the negative control, no broadcast: 0.5). Adam divides
# each gradient by its running RMS, so an element whose gradient is near
# its epsilon (1e-7) can move by 1e-6 a step for a 1e-9 rounding: 50
# steps, 5e-5, so 1e-4 (measured 3.2e-7) — for this data order, on which
# no ReLU input crosses 0 by rounding (such a crossing makes Adam step up
# to its learning rate apart).
gb_mpi_test(dist_equivalence_adam 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --steps 50 --global-batch 128 --optimizer adam --tolerance 1e-4)
# The same with the allreduce after backward and many small buckets, and
# on three ranks (43 images each of a global batch of 129), for 45 steps:
# on that data order a ReLU input crosses 0 by rounding between steps 45
# and 50 (since softmax's exp vectorized: weights 2.1e-7 apart after 45
# steps, 0.0037 after 50, every step's gradient still within 1.5e-7 of
# the global batch's at the same weights, which the per-step check asserts).
gb_mpi_test(dist_equivalence_no_overlap 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --steps 50 --optimizer sgd --tolerance 1e-5 --no-overlap --bucket-kb 16)
gb_mpi_test(dist_equivalence_3_ranks 3 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --steps 45 --global-batch 129 --optimizer sgd --tolerance 1e-5 --bucket-kb 64)
# The negative control: without the broadcast the check must fail.
gb_mpi_test(dist_equivalence_detects 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence --no-broadcast)
set_tests_properties(dist_equivalence_detects PROPERTIES PASS_REGULAR_EXPRESSION
  "weights max abs diff 0\\.[0-9]+ \\(tolerance 1e-05\\), ranks' weights DIFFER")

# The examples' hand-written loop under mpirun: the MLP eager (buckets
# overlapping backward) and traced (the graph's gradients averaged
# outside it), one epoch on 20,000 images at 64 per rank, must reach the
# accuracy one process reaches at batch 128 (fmnist_mlp_quick: 80 %), with
# rank 0 alone printing; the CNN on 3,200 images checks convolutions.
gb_mpi_expect(dist_fmnist_mlp 2 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_mlp
              --epochs 1 --limit 20000 --batch 64 --min-accuracy 0.80 --
              "training mlp on 20000 images, batch 64 per rank on 2 ranks")
gb_mpi_expect(dist_fmnist_mlp_traced 2 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_mlp
              --epochs 1 --limit 20000 --batch 64 --min-accuracy 0.80 --traced --
              "batch 64 per rank on 2 ranks" "traced train step")
gb_mpi_expect(dist_fmnist_cnn 2 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_cnn
              --epochs 1 --limit 3200 --batch 32 --min-accuracy 0.5 --
              "training cnn on 3200 images, batch 32 per rank on 2 ranks")

# A lost rank never hangs the others (tests/dist/killed_rank.sh): rank 1 of
# the MLP example is killed (SIGKILL) while training; rank 0 must end
# within the bound, non-zero, its message naming rank 1 as exited —
#   dist_killed_rank          plain mpirun, which ends the job itself (its
#                             SIGTERM interrupts the survivor's wait);
#   dist_killed_rank_timeout  mpirun --enable-recovery, which does not:
#                             the collective's 3-second deadline does.
# dist_silent_rank: a rank that hangs outside any collective is named as
# alive but silent when the deadline passes, and later collectives fail
# at once (tests/dist/silent_rank.c).
foreach(mode term timeout)
  set(name dist_killed_rank)
  if(mode STREQUAL timeout)
    set(name dist_killed_rank_timeout)
  endif()
  add_test(NAME ${name}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/dist/killed_rank.sh ${mode} 20
                   ${GB_MPIRUN} ${GB_MPIRUN_FLAGS} -np 2 --
                   ${CMAKE_BINARY_DIR}/examples/fashion_mnist_mlp --epochs 100 --batch 64)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${GB_MPI_TEST_ENV};GB_DIST_TIMEOUT=3"
                                          PROCESSORS 2 TIMEOUT 60 LABELS mpi)
endforeach()
gb_mpi_test(dist_silent_rank 2 ${CMAKE_BINARY_DIR}/tests/silent_rank)
set_tests_properties(dist_silent_rank PROPERTIES PASS_REGULAR_EXPRESSION "silent rank test: OK"
                     ENVIRONMENT "${GB_MPI_TEST_ENV};GB_DIST_TIMEOUT=2")

# fit with gb_fit_options.distributed: the same equivalence through
# gb_model_fit, traced (the graph returns the gradients, the average and
# the update follow it) and eager (buckets overlapping backward); and the
# Keras-style example under mpirun, whose logs (combined over the ranks)
# must show the accuracy one process reaches.
gb_mpi_test(dist_equivalence_fit 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --fit --steps 50 --optimizer sgd --tolerance 1e-5)
gb_mpi_test(dist_equivalence_fit_eager 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --fit --eager --steps 50 --optimizer adam --tolerance 1e-4)
gb_mpi_expect(dist_fmnist_fit 2 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_fit
              --model mlp --epochs 1 --limit 20000 --batch 64 --verbose 2 --min-accuracy 0.80 --
              "157/157" "val_accuracy")

# The profile of a 2-rank run (tests/dist/profile_two_ranks.sh): one capture
# on rank 0 with both ranks' tracks and their allreduce waits, exported.
add_test(NAME dist_profile_two_ranks
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/dist/profile_two_ranks.sh ${CMAKE_BINARY_DIR}
                 ${GB_MPIRUN} ${GB_MPIRUN_FLAGS} -np 2)
set_tests_properties(dist_profile_two_ranks PROPERTIES ENVIRONMENT "${GB_MPI_TEST_ENV}"
                     PROCESSORS 2 TIMEOUT 120 LABELS mpi
                     PASS_REGULAR_EXPRESSION "profile of 2 ranks: OK")

# The straggler view (tests/browser/straggler.test.mjs): 2 ranks, rank 1
# slowed on purpose; the store shows it computing longer and rank 0
# waiting, the Scalars page overlays the ranks (screenshot in
# <build>/tests/artifacts/straggler-scalars.png).
include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
gb_node_test(dist_straggler_browser ${CMAKE_CURRENT_LIST_DIR}/browser/straggler.test.mjs 180)
string(REPLACE ";" " " gb_mpirun_flags_text "${GB_MPIRUN_FLAGS}")
set_property(TEST dist_straggler_browser APPEND PROPERTY ENVIRONMENT
             "GB_MPIRUN=${GB_MPIRUN}" "GB_MPIRUN_FLAGS=${gb_mpirun_flags_text}" ${GB_MPI_TEST_ENV})
set_property(TEST dist_straggler_browser APPEND PROPERTY LABELS mpi)
set_property(TEST dist_straggler_browser PROPERTY PROCESSORS 2)

# serve --logdir (tests/browser/logdir.test.mjs): 20 stores of a sweep and
# fashion_mnist_fit --logdir on 2 ranks, a store per rank, as one board; a
# store made after the page opened appears on it (screenshots in
# <build>/tests/artifacts/logdir_*.png).
gb_node_test(dist_logdir_browser ${CMAKE_CURRENT_LIST_DIR}/browser/logdir.test.mjs 300)
set_property(TEST dist_logdir_browser APPEND PROPERTY ENVIRONMENT
             "GB_MPIRUN=${GB_MPIRUN}" "GB_MPIRUN_FLAGS=${gb_mpirun_flags_text}" ${GB_MPI_TEST_ENV})
set_property(TEST dist_logdir_browser APPEND PROPERTY LABELS mpi)
set_property(TEST dist_logdir_browser PROPERTY PROCESSORS 2)

# The training-health checks of a 2-rank fit (tests/dist/health_ranks.c):
# rank 0 alone reports; its figures are those of the averaged gradients
# (a one-process fit on the same global batches gives the same); each
# rank's own gradient norms are the scalars of the runs "rank_<r>".
gb_mpi_expect(health_ranks 2 ${CMAKE_BINARY_DIR}/tests/health_ranks -- "health_ranks: ok")

# A model of 80 Dense layers (160 trainable variables, more than a traced
# step could once return): the traced distributed fit averages and
# applies every gradient, equal to one process at the global batch, and
# every variable of every rank moves. (The weights' tolerance is wider than
# the MLP's: 80 layers carry the rounding of the ranks' sums further, 2.8e-5
# measured after 10 steps.)
gb_mpi_test(dist_equivalence_fit_deep 2 ${CMAKE_BINARY_DIR}/tests/dist_equivalence
            --fit --depth 80 --steps 10 --optimizer sgd --tolerance 1e-4)
