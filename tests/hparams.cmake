# The HParams page's end-to-end test (beyond test_webui_hparams.c):
#   webui_hparams_browser  write_sweep (tests/browser/write_sweep.c, built in
#                          webui.cmake) writes a 24-run sweep with a SIGKILLed
#                          run; Debian's chromium (playwright-core) sorts,
#                          filters and brushes the page, checks it against
#                          /api/hparams and watches two runs arrive live;
#                          screenshots go to <build>/tests/artifacts/hparams_*.png
include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
# The axes' tick labels (static/hparams/model.js), in node.
gb_node_test(hparams_ticks ${CMAKE_CURRENT_LIST_DIR}/hparams/ticks_check.mjs 30)
if(TARGET glassbox_webui)
  gb_node_test(webui_hparams_browser ${CMAKE_CURRENT_LIST_DIR}/browser/hparams.test.mjs 180)
  # browser_page (Makefile): under the sanitizers test_webui_hparams runs
  # /api/hparams, and dist_logdir_browser serves write_sweep's stores.
  set_property(TEST webui_hparams_browser APPEND PROPERTY LABELS browser_page)
endif()
# A real sweep on the HParams and PR Curves pages:
#   webui_sweep_browser  examples/hparam_sweep trains 12 short Fashion-MNIST
#                        runs; the table sorted by validation accuracy, the
#                        classes' PR curves at steps 0 and 1, AUC and hover
#                        against the API; screenshots <build>/tests/artifacts/sweep_*.png
if(TARGET glassbox_webui AND TARGET hparam_sweep)
  gb_node_test(webui_sweep_browser ${CMAKE_CURRENT_LIST_DIR}/browser/sweep.test.mjs 300)
  # browser_page (Makefile): under the sanitizers the README's doc test
  # readme_comparing_runs_hyperparameters_and_pr_curves runs hparam_sweep,
  # test_webui_hparams the hparams and PR curve API.
  set_property(TEST webui_sweep_browser APPEND PROPERTY LABELS browser_page)
endif()
