# The HParams page's end-to-end test (beyond test_webui_hparams.c):
#   webui_hparams_browser  write_sweep (tests/browser/write_sweep.c, built in
#                          webui.cmake) writes a 24-run sweep with a SIGKILLed
#                          run; Debian's chromium (playwright-core) sorts,
#                          filters and brushes the page, checks it against
#                          /api/hparams and watches two runs arrive live;
#                          screenshots go to <build>/tests/artifacts/hparams_*.png
if(TARGET glassbox_webui)
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_hparams_browser ${CMAKE_CURRENT_LIST_DIR}/browser/hparams.test.mjs 180)
endif()
