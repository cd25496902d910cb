# Defines weft's libraries from WEFT_INCLUDE_DIR and WEFT_SOURCE_DIR, for the source tree and
# add_subdirectory: weft::weft (the compiler, runtime, operators and graph layer) and, where
# libonnx-dev is, weft::onnx (the ONNX importer, linked only by those who use it). The
# installed package carries these libraries built (cmake/weft_install.cmake), so a
# find_package(weft) project compiles only its own files.
if(TARGET weft::weft)
  return()
endif()

# Static libraries by default; WEFT_SHARED_LIBS builds them shared (libweft_core.so, ...).
option(WEFT_SHARED_LIBS "Build weft's libraries as shared libraries" OFF)
if(WEFT_SHARED_LIBS)
  set(_weft_library_type SHARED)
else()
  set(_weft_library_type STATIC)
endif()

find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
find_package(Threads REQUIRED)
# Schedule records (Schedule::to_json/from_json); used only inside weft_core's implementation.
find_package(nlohmann_json 3 REQUIRED)

# The IR, schedule and lowering code, and the CUDA runtime (no LLVM or CUDA headers: it
# loads libcuda with dlopen, so it builds and runs on every machine; compiles in seconds).
add_library(weft_core ${_weft_library_type} ${WEFT_SOURCE_DIR}/weft_core.cpp ${WEFT_SOURCE_DIR}/weft_lower.cpp
            ${WEFT_SOURCE_DIR}/weft_cuda_runtime.cpp)
target_compile_features(weft_core PUBLIC cxx_std_20)
target_include_directories(weft_core PUBLIC $<BUILD_INTERFACE:${WEFT_INCLUDE_DIR}> $<INSTALL_INTERFACE:include>)
# (header-only: nothing of it is linked, so the installed package does not need it)
target_link_libraries(weft_core PRIVATE $<BUILD_INTERFACE:nlohmann_json::nlohmann_json> ${CMAKE_DL_LIBS})
set_target_properties(weft_core PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME core)

# The CUDA backend's compiler half (CUDA C generation, NVRTC opened with dlopen): no CUDA
# header or library is needed to build it. WEFT_CUDA (ON when CMake finds the toolkit) bakes
# the toolkit's include directory (for NVRTC's cuda_fp16.h / cuda_bf16.h) and library
# directory (libnvrtc) in as defaults; CUDA_PATH, WEFT_CUDA_INCLUDE and WEFT_NVRTC_LIBRARY
# override them at run time. With WEFT_CUDA=OFF, building for Target::cuda() is a weft::Error.
find_package(CUDAToolkit QUIET)
option(WEFT_CUDA "Build the CUDA backend (needs the CUDA toolkit at build time only for its include directory)"
       ${CUDAToolkit_FOUND})
target_sources(weft_core PRIVATE ${WEFT_SOURCE_DIR}/weft_cuda_codegen.cpp)
if(WEFT_CUDA)
  if(NOT CUDAToolkit_FOUND)
    message(FATAL_ERROR "WEFT_CUDA is ON but CMake did not find the CUDA toolkit (set CUDAToolkit_ROOT)")
  endif()
  list(GET CUDAToolkit_INCLUDE_DIRS 0 _weft_cuda_include)
  set_source_files_properties(${WEFT_SOURCE_DIR}/weft_cuda_codegen.cpp PROPERTIES COMPILE_DEFINITIONS
    "WEFT_CUDA_ENABLED=1;WEFT_CUDA_TOOLKIT_INCLUDE_DIR=\"${_weft_cuda_include}\";WEFT_CUDA_TOOLKIT_LIB_DIR=\"${CUDAToolkit_LIBRARY_DIR}\"")
endif()

# The LLVM backend, split in two translation units so that an edit to IR emission does not
# recompile the JIT and optimizer set-up (each LLVM-including TU costs ~13 s here).
add_library(weft_llvm ${_weft_library_type} ${WEFT_SOURCE_DIR}/weft_llvm_emit.cpp ${WEFT_SOURCE_DIR}/weft_llvm_jit.cpp)
target_link_libraries(weft_llvm PUBLIC weft_core PRIVATE LLVM)
target_include_directories(weft_llvm SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(weft_llvm PRIVATE ${LLVM_DEFINITIONS})
set_target_properties(weft_llvm PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME llvm)

# The operator inventory (topi/): compute definitions and default CPU schedules, one
# translation unit per group of operators.
add_library(weft_topi ${_weft_library_type} ${WEFT_SOURCE_DIR}/weft_topi_linalg.cpp ${WEFT_SOURCE_DIR}/weft_topi_conv.cpp
            ${WEFT_SOURCE_DIR}/weft_topi_nn.cpp ${WEFT_SOURCE_DIR}/weft_topi_x86.cpp
            ${WEFT_SOURCE_DIR}/weft_topi_transform.cpp ${WEFT_SOURCE_DIR}/weft_topi_cuda.cpp)
target_link_libraries(weft_topi PUBLIC weft_core)
set_target_properties(weft_topi PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME topi)

# The graph layer (graph/): Graph IR, operators, fusion, memory planning, executor.
add_library(weft_graph ${_weft_library_type} ${WEFT_SOURCE_DIR}/weft_graph.cpp ${WEFT_SOURCE_DIR}/weft_autotune.cpp)
target_link_libraries(weft_graph PUBLIC weft_topi weft_core)
set_target_properties(weft_graph PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME graph)

# The ONNX importer (frontend/onnx/): Debian's libonnx-dev protobuf classes (libonnx_proto) and
# libprotobuf, used only inside weft_onnx's implementation. Built when both are found.
find_path(WEFT_ONNX_INCLUDE_DIR onnx/onnx-ml.pb.h)
find_library(WEFT_ONNX_PROTO_LIBRARY NAMES onnx_proto)
find_package(Protobuf QUIET)
if(WEFT_ONNX_INCLUDE_DIR AND WEFT_ONNX_PROTO_LIBRARY AND Protobuf_FOUND)
  set(_weft_onnx_default ON)
else()
  set(_weft_onnx_default OFF)
endif()
option(WEFT_ONNX "Build the ONNX importer weft_onnx (needs libonnx-dev and libprotobuf-dev)" ${_weft_onnx_default})
if(WEFT_ONNX)
  if(NOT _weft_onnx_default)
    message(FATAL_ERROR "WEFT_ONNX is ON but the ONNX protobuf headers/library (libonnx-dev) or protobuf (libprotobuf-dev) were not found")
  endif()
endif()

add_library(weft INTERFACE)
target_link_libraries(weft INTERFACE weft_graph weft_topi weft_llvm weft_core Threads::Threads ${CMAKE_DL_LIBS})
target_compile_features(weft INTERFACE cxx_std_20)
add_library(weft::weft ALIAS weft)

# weft::onnx: the importer and everything weft::weft has.
if(WEFT_ONNX)
  add_library(weft_onnx ${_weft_library_type} ${WEFT_SOURCE_DIR}/weft_onnx.cpp)
  target_link_libraries(weft_onnx PUBLIC weft PRIVATE ${WEFT_ONNX_PROTO_LIBRARY} protobuf::libprotobuf)
  target_include_directories(weft_onnx SYSTEM PRIVATE ${WEFT_ONNX_INCLUDE_DIR})
  target_compile_definitions(weft_onnx PRIVATE ONNX_ML=1 ONNX_NAMESPACE=onnx)
  set_target_properties(weft_onnx PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME onnx)
  add_library(weft::onnx ALIAS weft_onnx)
endif()

# Shared, each library finds the others beside it once installed (a program linked with
# --as-needed may not list them itself).
if(WEFT_SHARED_LIBS)
  foreach(_weft_lib weft_core weft_llvm weft_topi weft_graph weft_onnx)
    if(TARGET ${_weft_lib})
      set_target_properties(${_weft_lib} PROPERTIES INSTALL_RPATH "$ORIGIN")
    endif()
  endforeach()
endif()

# weft_rpc (weft/rpc/rpc.hpp): the RPC device pool for tuning on other machines, where gRPC is
# (Debian's libgrpc++-dev and protobuf-compiler-grpc). Its gRPC code is generated here from
# src/rpc/weft_rpc.proto and stays inside the library.
find_package(gRPC CONFIG QUIET)
if(gRPC_FOUND AND Protobuf_FOUND AND TARGET protobuf::protoc)
  set(_weft_rpc_default ON)
else()
  set(_weft_rpc_default OFF)
endif()
option(WEFT_RPC "Build weft_rpc, the RPC runners and tracker (needs libgrpc++-dev, protobuf-compiler-grpc)"
       ${_weft_rpc_default})
if(WEFT_RPC)
  if(NOT _weft_rpc_default)
    message(FATAL_ERROR "WEFT_RPC is ON but gRPC's CMake package or protoc was not found (libgrpc++-dev, protobuf-compiler-grpc)")
  endif()
  set(_weft_rpc_gen ${CMAKE_CURRENT_BINARY_DIR}/weft_rpc_generated)
  file(MAKE_DIRECTORY ${_weft_rpc_gen})
  set(_weft_rpc_sources ${_weft_rpc_gen}/weft_rpc.pb.cc ${_weft_rpc_gen}/weft_rpc.grpc.pb.cc)
  add_custom_command(
    OUTPUT ${_weft_rpc_sources} ${_weft_rpc_gen}/weft_rpc.pb.h ${_weft_rpc_gen}/weft_rpc.grpc.pb.h
    COMMAND protobuf::protoc --cpp_out=${_weft_rpc_gen} --grpc_out=${_weft_rpc_gen}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin> -I ${WEFT_SOURCE_DIR}/rpc
            ${WEFT_SOURCE_DIR}/rpc/weft_rpc.proto
    DEPENDS ${WEFT_SOURCE_DIR}/rpc/weft_rpc.proto
    COMMENT "protoc: weft_rpc.proto")
  add_library(weft_rpc STATIC ${WEFT_SOURCE_DIR}/weft_rpc.cpp ${_weft_rpc_sources})
  target_include_directories(weft_rpc SYSTEM PRIVATE ${_weft_rpc_gen})
  target_link_libraries(weft_rpc PUBLIC weft PRIVATE gRPC::grpc++ protobuf::libprotobuf)
  # Built only for what links it (tools/rpc, tests, a user's weft::rpc): not by everyone's "all".
  set_target_properties(weft_rpc PROPERTIES POSITION_INDEPENDENT_CODE ON EXCLUDE_FROM_ALL ON)
  add_library(weft::rpc ALIAS weft_rpc)
endif()
