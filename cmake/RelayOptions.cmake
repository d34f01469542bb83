# Compiler flags shared by every Relay target, applied through the relay_flags interface target.
add_library(relay_flags INTERFACE)
target_compile_options(relay_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Wimplicit-fallthrough
  # GCC 12 reports false positives inside yaml-cpp 0.7's inlined node code (Node::operator[]).
  $<$<CXX_COMPILER_ID:GNU>:-Wno-dangling-pointer>)
if(RELAY_WERROR)
  target_compile_options(relay_flags INTERFACE -Werror)
endif()
if(RELAY_SANITIZE)
  target_compile_options(relay_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(relay_flags INTERFACE -fsanitize=address,undefined)
endif()
if(RELAY_FUZZ)
  # Every library is instrumented for coverage; only the fuzz targets link the fuzzer main.
  target_compile_options(relay_flags INTERFACE -fsanitize=fuzzer-no-link,address,undefined)
  target_link_options(relay_flags INTERFACE -fsanitize=address,undefined)
endif()
target_include_directories(relay_flags INTERFACE ${PROJECT_SOURCE_DIR}/src)

# relay_module(NAME SOURCES... DEPS ...): one static library per src/ folder, named relay_<NAME>.
function(relay_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(relay_${name} STATIC ${ARG_SOURCES})
  target_link_libraries(relay_${name} PUBLIC relay_flags ${ARG_DEPS})
endfunction()

# lld links when it is installed (package lld, README "Dependencies"): half GNU ld's time for one
# of the suite's 150 executables (2.0 s -> 0.9 s for integration_pipeline_tests); GNU ld
# otherwise. The linker changes nothing in the binaries' behaviour.
include(CheckLinkerFlag)
check_linker_flag(CXX "-fuse-ld=lld" RELAY_HAS_LLD)
if(RELAY_HAS_LLD)
  add_link_options(-fuse-ld=lld)
endif()
