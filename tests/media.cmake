# The projector's and the audio summaries' files against independent readers:
#   audio_wav_readers    tests/media/wav_check.py writes clips through
#                        audio_dump (the writer, then the reader) and reads
#                        every WAV with Python's wave module and with sox:
#                        the samples, rate, channels and clipped counts must
#                        be those written, and a NaN is refused by name.
#   projector_pca_numpy  tests/media/pca_check.py holds the Projector's PCA
#                        (static/projector/pca.js, run by node) against
#                        NumPy's SVD of the same centered matrix:
#                        components and explained variance.
#   projector_model      tests/media/model_check.mjs: nearest neighbours,
#                        search, colours and the spectrogram's bins.
find_program(GB_DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
add_executable(audio_dump ${CMAKE_CURRENT_LIST_DIR}/media/audio_dump.c)
target_link_libraries(audio_dump PRIVATE glassbox_writer)
set_target_properties(audio_dump PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
if(GB_DEBIAN_PYTHON3)
  add_test(NAME audio_wav_readers
           COMMAND ${GB_DEBIAN_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/media/wav_check.py
                   $<TARGET_FILE:audio_dump> ${CMAKE_BINARY_DIR}/tests/audio_wav_work)
  add_test(NAME projector_pca_numpy
           COMMAND ${GB_DEBIAN_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/media/pca_check.py
                   ${NODE_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/media/pca_dump.mjs
                   ${CMAKE_BINARY_DIR}/tests/pca_work)
else()
  foreach(name audio_wav_readers projector_pca_numpy)
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
             "-DMESSAGE=${name}: /usr/bin/python3 not found — run scripts/bootstrap.sh"
             -P ${CMAKE_CURRENT_LIST_DIR}/browser/fail.cmake)
  endforeach()
endif()
gb_node_test(projector_model ${CMAKE_CURRENT_LIST_DIR}/media/model_check.mjs 120)

# The pages in chromium (tests/browser/): the Projector on the CNN's
# activations (fashion_mnist_fit --projector), the Audio page on
# audio_synth's clips. Screenshots: <build>/tests/artifacts/.
gb_node_test(projector_browser ${CMAKE_CURRENT_LIST_DIR}/browser/projector.test.mjs 900)
# full_size (Makefile): its time is the CNN's two epochs and the page's
# t-SNE; the sanitizers see the projector's C side in test_webui_api and
# test_summary_media, and the CNN's layers in saved_model_train and
# dist_fmnist_cnn.
set_property(TEST projector_browser APPEND PROPERTY LABELS full_size)
set_tests_properties(projector_browser PROPERTIES COST 700)
# The Projector's CPU renderer (splat.js) against its WebGL one, pixel by
# pixel, on a synthetic embedding (tests/browser/write_embedding).
gb_node_test(projector_render ${CMAKE_CURRENT_LIST_DIR}/browser/projector_render.test.mjs 300)
# browser_page (Makefile): its checks are the two renderers' pixels; under
# the sanitizers test_summary_media writes embeddings and test_webui_api
# serves them.
set_property(TEST projector_render APPEND PROPERTY LABELS browser_page)
gb_node_test(audio_browser ${CMAKE_CURRENT_LIST_DIR}/browser/audio.test.mjs 300)
