# Driven by tests/package/CMakeLists.txt:  cmake -DMODE=... -P run_package_test.cmake
#   MODE=install           install WEFT_BUILD_DIR into WORK/prefix (from scratch)
#   MODE=find_package      build CONSUMER_DIR against WORK/prefix and run it
#   MODE=add_subdirectory  build CONSUMER_DIR with add_subdirectory(WEFT_ROOT) and run it
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "FAILED (${rc}): ${cmd}\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK}/prefix)

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${prefix})
  run(${CMAKE_COMMAND} --install ${WEFT_BUILD_DIR} --prefix ${prefix})
  foreach(f include/weft/ir/expr.hpp include/weft/impl/core.hpp share/weft/cmake/weftConfig.cmake
            share/weft/cmake/weftConfigVersion.cmake share/weft/cmake/weftTargets.cmake)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the installed package lacks ${f}")
    endif()
  endforeach()
  # weft's libraries, built (static, or shared with WEFT_SHARED_LIBS): no sources to compile.
  foreach(lib weft_core weft_llvm weft_topi weft_graph)
    file(GLOB found ${prefix}/lib*/lib${lib}.a ${prefix}/lib*/lib${lib}.so)
    if(NOT found)
      message(FATAL_ERROR "the installed package lacks the library ${lib}")
    endif()
  endforeach()
  file(GLOB_RECURSE sources ${prefix}/*.cpp)
  if(sources)
    message(FATAL_ERROR "the installed package holds sources for its users to compile: ${sources}")
  endif()
  message("installed weft into ${prefix}")
  return()
endif()

set(bin ${WORK}/consumer-${MODE})
file(REMOVE_RECURSE ${bin})
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${bin} -G Ninja
    # No build type: -O0 without -g. The test is about packaging, and weft's implementation
    # compiles in half the CPU time of -O3 (~21 s vs ~42 s for the three TUs, measured);
    # kernels are still optimized by LLVM at run time.
    -DCMAKE_BUILD_TYPE=
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC})
if(LINKER_FLAGS)
  list(APPEND configure -DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS})
endif()
if(MODE STREQUAL "find_package")
  # Only the temporary prefix: the source tree must not leak into the consumer.
  list(APPEND configure -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
elseif(MODE STREQUAL "add_subdirectory")
  list(APPEND configure -DWEFT_ADD_SUBDIRECTORY=${WEFT_ROOT})
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()

run(${configure})
if(MODE STREQUAL "find_package")
  # The targets must come from the installed package, not from the source tree.
  file(STRINGS ${bin}/CMakeCache.txt weft_dir REGEX "^weft_DIR:")
  if(NOT weft_dir MATCHES "${prefix}/share/weft/cmake")
    message(FATAL_ERROR "find_package(weft) did not use the installed package: ${weft_dir}")
  endif()
endif()
run(${CMAKE_COMMAND} --build ${bin} --parallel 2)

# A user's file that includes weft's headers must never parse LLVM's headers.
find_program(NINJA NAMES ninja ninja-build REQUIRED)
run(${NINJA} -C ${bin} -t deps CMakeFiles/consumer.dir/main.cpp.o)
if(last_output MATCHES "(/include/llvm/|/include/llvm-c/|/include/llvm-[0-9]+/|/llvm-[0-9]+/include/)[^\n]*")
  message(FATAL_ERROR "consumer/main.cpp parsed an LLVM header: ${CMAKE_MATCH_0}")
endif()
if(NOT last_output MATCHES "weft/ir/")
  message(FATAL_ERROR "could not read the consumer's header dependencies:\n${last_output}")
endif()
if(MODE STREQUAL "find_package" AND NOT last_output MATCHES "${prefix}/include/weft/")
  message(FATAL_ERROR "consumer/main.cpp did not read weft's headers from the installed package")
endif()

run(${bin}/consumer)
message("${last_output}")
if(NOT last_output MATCHES "weft consumer: ok")
  message(FATAL_ERROR "the consumer did not print 'weft consumer: ok'")
endif()

# weft::onnx, where weft was built with the importer.
if(EXISTS ${bin}/consumer_onnx)
  run(${bin}/consumer_onnx)
  message("${last_output}")
  if(NOT last_output MATCHES "weft onnx consumer: ok")
    message(FATAL_ERROR "the ONNX consumer did not print 'weft onnx consumer: ok'")
  endif()
elseif(MODE STREQUAL "find_package" AND EXISTS ${prefix}/share/weft/cmake/weftTargets.cmake)
  file(READ ${prefix}/share/weft/cmake/weftTargets.cmake targets)
  if(targets MATCHES "weft::onnx")
    message(FATAL_ERROR "the package has weft::onnx but the consumer did not build consumer_onnx")
  endif()
endif()
