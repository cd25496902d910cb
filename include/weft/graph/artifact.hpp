// Compiled-module artifacts: a graph::Module saved to one file and loaded back without
// compiling anything (what `weftc compile` writes and `weftc run` reads).
//
//   graph::Module m = graph::build(onnx::load("resnet18.onnx"));
//   graph::save(m, "resnet18.weft");                  // object code, graph, plan, weights
//   ...
//   graph::Module r = graph::load_module("resnet18.weft");   // links the object code: no JIT compile
//   r.set_input("input", x);  r.run();
//
// The file holds the module as compiled: the graph after the passes (operators, attributes,
// types, and every constant's data), the fused groups in execution order, each kernel's
// signature, argument node ids, relocatable object code (KernelModule::object_code()) and
// that code's FNV-1a 64 hash (checked on load: a kernel given another kernel's object is
// refused), the memory plan (each planned tensor's offset in the arena) and the target the
// code was compiled for. Loading links each kernel's object into the JIT (codegen::load_llvm_object)
// and rebuilds the module around it; the kernel cache and the compiler are not involved.
//
// Layout (little-endian): a 32-byte header -- the magic "WEFTMODL", the format version
// (uint32), reserved (uint32), the payload's size (uint64) and its checksum
// (uint64, artifact_checksum) -- then the payload, each constant's data 64-byte aligned. A file with another magic or version, a truncated file, a
// checksum that does not match or contents that do not fit together is a weft::Error that
// says so; the loader never reads past its input or trusts a count it has not checked.
// An artifact runs only on a CPU with every feature it was compiled for (checked on load).
//
// An artifact is executable code: loading links its object code into the process and run()
// executes it. Load only artifacts you trust, as you would a shared library; the checks
// catch corruption and inconsistency (each kernel's object against its hash, the memory
// plan against the kernels' lifetimes, ...), not a malicious author.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "weft/graph/module.hpp"

namespace weft::graph {

inline constexpr char kArtifactMagic[9] = "WEFTMODL";
// 10: a loop's kernel (Graph::loop) holds its body's module, an artifact of its own;
// 9: a symbolic extent may hold floor terms (a strided convolution over an image size);
// 8: the checksum is hash64 (at memory speed: FNV-1a's byte loop dominated loading), and
// each constant's data starts at a multiple of 64 bytes in the file (load_module maps
// the file and views the constants in place);
// 7: symbolic dimensions (the symbols, each node's extents as functions of them, each
// kernel's SampleRun and large-size variant; a symbolic module's kernels take the symbols
// as scalars);
// 6: each kernel stores its tuning workload and whether it was tuned (KernelInfo);
// 5: the object code calls weft_runtime_parallel_for with a fourth argument (the loop's
// work per iteration); 4: each kernel stores its object code's hash; 3: kernel arguments say
// which is written and which inputs it may overwrite in place; 2: the checksum is FNV-1a 64
// (1 used a wrong offset basis).
inline constexpr uint32_t kArtifactVersion = 10;
// The most dimensions a tensor of an artifact has: save refuses more, so load reads whatever
// save wrote (graph::Limits::max_rank's default is the same).
inline constexpr size_t kArtifactMaxRank = 16;
inline constexpr size_t kArtifactHeaderBytes = 32;
// The deepest loops (Graph::loop) nest in an artifact: each one's body is an artifact inside.
inline constexpr int kMaxArtifactLoopDepth = 32;

// The largest artifact load_module reads unless told otherwise: 4 GiB, above the weights
// and code of any model weft compiles, and a bound on what a wrong path can make it allocate.
inline constexpr int64_t kDefaultMaxArtifactBytes = int64_t(4) << 30;

// Free-form key/value strings stored with a module (weftc records the source model, the
// build options and the default thread count).
using ArtifactMetadata = std::map<std::string, std::string>;

// Serializes a module built by graph::build (or loaded by load_module). Throws weft::Error
// when a kernel has no object code to save (a backend that keeps none). A tiered build
// (BuildOptions::tier) is saved with its optimized kernels: this waits for them and the
// module takes them (Module::wait_optimized; not while another thread runs it).
std::string save_to_memory(const Module& m, const ArtifactMetadata& metadata = {});
void save(const Module& m, const std::string& path, const ArtifactMetadata& metadata = {});

// Loads a module that save() wrote; `metadata`, when given, receives what was stored with
// it. Throws weft::Error for a missing, foreign, truncated or corrupt file, one compiled for
// CPU features this machine lacks, or one larger than max_file_bytes (checked before more
// is read; a device or a directory is refused at once).
Module load_module(const std::string& path, ArtifactMetadata* metadata = nullptr,
                   int64_t max_file_bytes = kDefaultMaxArtifactBytes);
Module load_module_from_memory(std::string_view bytes, ArtifactMetadata* metadata = nullptr,
                               const std::string& source = "<memory>");

// Where each planned intermediate of a module lives in its arena (Module::memory_bytes()
// long): the node, its byte offset and size, by offset. What artifacts store; weftc info
// prints it.
struct Placement {
    int node = -1;
    int64_t offset = 0, bytes = 0;
};
std::vector<Placement> memory_placements(const Module& m);

// Does the file start with the artifact magic? (false for a missing or short file)
bool is_artifact_file(const std::string& path);

// The checksum of the header: weft::detail::hash64 over the payload.
uint64_t artifact_checksum(std::string_view payload);

}  // namespace weft::graph
