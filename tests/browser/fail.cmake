# fail.cmake — the stand-in for a test whose tool is missing: prints why
# and exits non-zero, so the test fails instead of vanishing.
#   cmake -DMESSAGE="webui_browser: node not found — ..." -P fail.cmake
message(FATAL_ERROR "${MESSAGE}")
