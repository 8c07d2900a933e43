# SavedModel end to end (the checkpoints issue's "runs without the code"):
#   saved_model_train     fashion_mnist_fit trains the CNN with
#                         BatchNormalization (one epoch on 3,000 images,
#                         to an accuracy above chance: after 47 steps the
#                         moving statistics, momentum 0.99, still lag),
#                         saves it as a SavedModel and writes its own
#                         logits for the 10,000 test images; under the
#                         sanitizers it stands for fmnist_fit_cnn_bn
#   saved_model_predict   a program linking only the engine loads the
#                         directory and must predict the same, bit for bit
#   saved_model_cli_show  `glassbox saved-model show` lists the signature
#   saved_model_cli_run   `glassbox saved-model run` on the IDX test file
#                         writes logits.npy equal to the same file
add_executable(saved_model_predict ${CMAKE_CURRENT_LIST_DIR}/saved_model_predict.c)
target_link_libraries(saved_model_predict PRIVATE glassbox_framework)
set_target_properties(saved_model_predict PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

set(sm_dir ${CMAKE_BINARY_DIR}/tests/saved_model_fmnist)
set(sm_images /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz)
add_test(NAME saved_model_train
         COMMAND ${CMAKE_COMMAND} -E env
                 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_fit --model cnn_bn --epochs 1 --limit 3000
                 --batch 64 --verbose 0 --no-validation --min-accuracy 0.2 --save-model ${sm_dir}
                 --save-predictions ${sm_dir}-expected.npy)
set_tests_properties(saved_model_train PROPERTIES FIXTURES_SETUP saved_model TIMEOUT 600)
# COST: under the sanitizers it is the longest test, and three wait for
# it: it starts first, so they run beside the others (a fresh clone has no
# timings for CTest to schedule by).
set_tests_properties(saved_model_train PROPERTIES COST 900)
add_test(NAME saved_model_predict
         COMMAND saved_model_predict ${sm_dir} ${sm_images} ${sm_dir}-expected.npy)
set_tests_properties(saved_model_predict PROPERTIES FIXTURES_REQUIRED saved_model
                     PASS_REGULAR_EXPRESSION "10000 predictions identical")
if(TARGET glassbox)
  add_test(NAME saved_model_cli_show COMMAND glassbox saved-model show --dir ${sm_dir})
  set_tests_properties(saved_model_cli_show PROPERTIES FIXTURES_REQUIRED saved_model
    PASS_REGULAR_EXPRESSION "signature 'serving_default' \\([0-9]+ nodes\\):\n  inputs:\n    images +uint8\\[-1,28,28\\]\n  outputs:\n    logits +float32\\[-1,10\\]\n    class +int64\\[-1\\]")
  add_test(NAME saved_model_cli_run
           COMMAND bash -c "rm -rf \"$1\" && \"$0\" saved-model run --dir \"$2\" --input images=\"$3\" --output-dir \"$1/out/\" && cmp \"$1/out/logits.npy\" \"$4\" && echo logits identical"
                   $<TARGET_FILE:glassbox> ${sm_dir}-run ${sm_dir} ${sm_images} ${sm_dir}-expected.npy)
  set_tests_properties(saved_model_cli_run PROPERTIES FIXTURES_REQUIRED saved_model
                       PASS_REGULAR_EXPRESSION "logits identical")
endif()

# The engine-side commands refuse bad input with a message and an exit
# code: an input the signature does not have (usage, 2), a file of the
# wrong shape (1), a file that is not a checkpoint (1), a command without
# its action or with an unknown one (2), a missing model (1).
function(gb_model_cli_refuses name expect)
  add_test(NAME saved_model_cli_refuses_${name}
           COMMAND bash -c "\"$0\" \"$@\" 2>&1; echo \"exit=$?\"" $<TARGET_FILE:glassbox> ${ARGN})
  set_tests_properties(saved_model_cli_refuses_${name} PROPERTIES FIXTURES_REQUIRED saved_model
                       PASS_REGULAR_EXPRESSION "${expect}")
endfunction()
if(TARGET glassbox)
  set(sm_labels /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz)
  gb_model_cli_refuses(unknown_input "glassbox saved-model run: the signature has no input 'pixels'.*exit=2"
                       saved-model run --dir ${sm_dir} --input pixels=${sm_labels})
  gb_model_cli_refuses(wrong_shape "input 0 \\('images'\\) is uint8\\[10000\\], which does not fit its input signature uint8\\[-1,28,28\\]\nexit=1"
                       saved-model run --dir ${sm_dir} --input images=${sm_labels})
  gb_model_cli_refuses(value_for_a_batch "input 'images' is uint8\\[-1,28,28\\]; --input-exprs gives one value \\(use --input\\)\nexit=1"
                       saved-model run --dir ${sm_dir} --input-exprs images=3)
  gb_model_cli_refuses(not_a_checkpoint "glassbox checkpoint ls: .*saved_model.json: not a glassbox checkpoint \\(bad magic\\)\nexit=1"
                       checkpoint ls --file ${sm_dir}/saved_model.json)
  gb_model_cli_refuses(no_action "^glassbox saved-model: which action\\? \\(show, run\\)\n\nusage: .*exit=2"
                       saved-model)
  gb_model_cli_refuses(unknown_action "^glassbox checkpoint: unknown action 'list' \\(ls\\)\n.*exit=2"
                       checkpoint list)
  gb_model_cli_refuses(missing_model "glassbox saved-model show: /nonexistent/saved_model.json: cannot open: No such file or directory\nexit=1"
                       saved-model show --dir /nonexistent)
endif()

# Strings end to end: fortune_topics saves a SavedModel that takes raw text;
# `glassbox saved-model run` classifies five fortunes written by hand
# (tests/fixtures/five_fortunes.txt, one per line) with no model code.
set(sm_text ${CMAKE_BINARY_DIR}/tests/saved_model_fortunes)
add_test(NAME saved_model_text_train
         COMMAND ${CMAKE_BINARY_DIR}/examples/fortune_topics --epochs 3 --saved-model ${sm_text})
set_tests_properties(saved_model_text_train PROPERTIES FIXTURES_SETUP saved_model_text TIMEOUT 300)
if(TARGET glassbox)
  add_test(NAME saved_model_cli_run_text
           COMMAND glassbox saved-model run --dir ${sm_text}
                   --input text=${CMAKE_CURRENT_LIST_DIR}/fixtures/five_fortunes.txt)
  set_tests_properties(saved_model_cli_run_text PROPERTIES FIXTURES_REQUIRED saved_model_text
    PASS_REGULAR_EXPRESSION "output 'topic': string\\[5\\]\n    b'computers'\n    b'law'\n    b'food'\n    b'[a-z]+'\n    b'politics'\n")
  # The same fortunes as NumPy's unicode strings (tests/fixtures/
  # five_fortunes.npy: the layout np.save writes for a '<U80' array), the
  # topics written back as .npy bytes and .txt lines, the same files as
  # from the .txt input.
  add_test(NAME saved_model_cli_run_npy_strings
           COMMAND bash -c "rm -rf \"$1\" && \"$0\" saved-model run --dir \"$2\" --input text=\"$3\" --output-dir \"$1\" >/dev/null && \"$0\" saved-model run --dir \"$2\" --input text=\"$4\" --print 0 --output-dir \"$1/from_txt\" >/dev/null && cmp \"$1/topic.txt\" \"$1/from_txt/topic.txt\" && cmp \"$1/topic.npy\" \"$1/from_txt/topic.npy\" && cat \"$1/topic.txt\""
                   $<TARGET_FILE:glassbox> ${CMAKE_BINARY_DIR}/tests/saved_model_npy_strings ${sm_text}
                   ${CMAKE_CURRENT_LIST_DIR}/fixtures/five_fortunes.npy
                   ${CMAKE_CURRENT_LIST_DIR}/fixtures/five_fortunes.txt)
  set_tests_properties(saved_model_cli_run_npy_strings PROPERTIES FIXTURES_REQUIRED saved_model_text
    PASS_REGULAR_EXPRESSION "^computers\nlaw\nfood\n[a-z]+\npolitics\n$")
endif()
