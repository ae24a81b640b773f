# Writes version.hpp with the current git commit, at build time, touching the
# file only when its content changes (so a new commit rebuilds little).
# Inputs: SOURCE_DIR, OUTPUT, PROJECT_VERSION, and LINKS: the layers' links
# to OUTPUT ("|"-separated), made again if a clean removed them.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE ASYNCSOLVE_GIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR ASYNCSOLVE_GIT STREQUAL "")
  set(ASYNCSOLVE_GIT "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
                  RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND ASYNCSOLVE_GIT "-dirty")
  endif()
endif()
configure_file(${SOURCE_DIR}/cmake/version.hpp.in ${OUTPUT} @ONLY)
string(REPLACE "|" ";" _links "${LINKS}")
foreach(link IN LISTS _links)
  if(NOT EXISTS ${link})
    get_filename_component(dir ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${dir})
    file(CREATE_LINK ${OUTPUT} ${link} SYMBOLIC)
  endif()
endforeach()
