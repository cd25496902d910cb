// weft::onnx: imports an ONNX model (.onnx file) as a graph::Graph.
//
//   graph::Graph g = onnx::load("resnet18.onnx");                       // shapes from the model
//   graph::Graph h = onnx::load("model.onnx", {.input_shapes = {{"x", {1, 3, 224, 224}}}});
//   graph::Module m = graph::build(g);
//   m.set_input("input", x);  m.run();  const BufferRef& y = m.get_output("output");
//
// The graph's inputs are the model's inputs that are not initializers, with the model's
// names; its outputs are the model's outputs, with their names; initializers become
// constants. Every node the importer adds is named after the ONNX value it computes (a
// node that becomes several graph nodes names the others "<value>/<step>").
//
// This header includes neither protobuf nor ONNX: the implementation is compiled once into
// the weft_onnx library (built when CMake finds Debian's libonnx-dev and libprotobuf-dev;
// the CMake option WEFT_ONNX). Anything the importer cannot handle -- an unsupported
// operator, opset, attribute or dtype, a symbolic dimension without a value, a malformed or
// truncated file -- is a weft::Error naming the node, its op type and the opset, never a
// crash. See docs/onnx.md.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/graph/module.hpp"
#include "weft/ir/error.hpp"
#include "weft/runtime/buffer.hpp"

namespace weft::onnx {

// The opsets of the default ("ai.onnx") domain the importer reads. 11 to 17 are the target;
// older ones load with their attribute forms (ONNX's own test data has opsets 1 to 10 too).
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 28;

// A weft::Error for something the importer does not support (rather than a broken file):
// an operator, an opset, an attribute value or a dtype. The conformance runner counts these
// as "unsupported" instead of "failed".
class UnsupportedError : public Error {
public:
    using Error::Error;
    [[noreturn]] void rethrow_with(const std::string& message) const override { throw UnsupportedError(message); }
};

struct LoadOptions {
    // Shapes of graph inputs by name, replacing the model's (needed where it has symbolic or
    // missing dimensions). The rank must match the model's; a fixed dimension must keep its
    // value.
    std::map<std::string, std::vector<int64_t>> input_shapes;
    // Values of symbolic dimensions by their name (dim_param), e.g. {"batch", 1}; applied to
    // every input that uses the name. input_shapes wins where both apply.
    std::map<std::string, int64_t> dim_values;
    // Symbolic dimensions (by dim_param name) to keep symbolic, with their bounds: the graph
    // is imported at each one's max, and a module built from it runs at any value in
    // [min, max] (graph::Symbol, docs/graph.md "Symbolic dimensions"), e.g.
    // {.symbols = {{"batch", 16}}}. dim_values and input_shapes win where they also apply.
    std::vector<graph::Symbol> symbols;
    // Graph inputs to freeze as constants with these values (dtype and shape must fit the
    // model's). weft's shapes are static: an input that decides a shape (Reshape's shape,
    // Squeeze's axes, Expand's shape, ...) must be a constant; freezing it makes one.
    std::map<std::string, BufferRef> constant_inputs;
    // The most iterations of a Loop whose trip count or condition the inputs' values decide
    // (0: such a loop is refused). The loop is unrolled this many times, each iteration's
    // results kept only while the loop still runs, so every run costs all of them; a run
    // whose loop would go on past this many is a weft::Error from graph::Module::run
    // (Graph::check_at_run). A loop that the importer can count is unrolled as it runs.
    int64_t max_loop_iterations = 0;
    // What the imported graph may hold (rank, elements and bytes of every tensor, the
    // intermediate ones included, node count, a node's input count); a model that needs more
    // is an error naming the node and the limit. The graph keeps them (graph::Limits).
    graph::Limits limits;
    // An .onnx file larger than this is an error, raised before more is read (a device such
    // as /dev/zero, or a directory, is one at once). The default is protobuf's own limit on a
    // message, 2 GiB less a byte: a larger model does not parse whatever this says (its
    // weights would have to live in external data files, which the importer does not read).
    int64_t max_file_bytes = int64_t(std::numeric_limits<int>::max());
};

// Loads an .onnx file (at most options.max_file_bytes of it). Throws weft::Error
// (UnsupportedError for unsupported content).
graph::Graph load(const std::string& path, const LoadOptions& options = {});
// The same from the bytes of a model.
graph::Graph load_from_memory(const void* data, size_t size, const LoadOptions& options = {});
graph::Graph load_from_memory(const std::string& bytes, const LoadOptions& options = {});

// onnx::compile's options: how to import, how to build, for what, and where compiled
// modules are kept between processes.
struct CompileOptions {
    LoadOptions load;
    graph::BuildOptions build;
    Target target = Target::host();
    // A directory of compiled modules (graph::save's artifacts), one per model file (its
    // bytes), options, target, thread count and build of weft: compile() loads the module
    // from there when it holds one (no import and no compile: a warm start) and saves it
    // there after a build. "": the directory the environment variable WEFT_MODEL_CACHE_DIR
    // names, else none. Modules that cannot be saved (kernels compiled per size, a CUDA
    // target, BuildOptions::allocate off) are built every time.
    std::string cache_dir;
};

// The .onnx file at `path` imported (options.load) and built (graph::build with
// options.target and options.build), or its module loaded from options.cache_dir.
//   graph::Module m = onnx::compile("resnet50.onnx", {.cache_dir = "/var/cache/app/weft"});
graph::Module compile(const std::string& path, const CompileOptions& options = {});

// A serialized TensorProto (the .pb files of ONNX's test data) as an owning, compact
// buffer; `name`, when given, receives the tensor's name. A rank-0 tensor has shape [].
// The file is read up to LoadOptions' default max_file_bytes.
BufferRef load_tensor(const std::string& path, std::string* name = nullptr);
BufferRef load_tensor_from_memory(const void* data, size_t size, std::string* name = nullptr);

// What a model contains, read without converting it.
struct ModelInfo {
    int64_t ir_version = 0;
    int opset = 0;                     // of the default domain
    std::string producer;              // producer_name + " " + producer_version
    std::vector<std::string> op_types;          // every op type used, sorted, once each
    std::vector<std::string> unsupported_ops;   // those the importer has no converter for
                                                // (or of another domain: "domain:Op")
};
// Reads the file up to options.max_file_bytes (the only option it uses).
ModelInfo inspect(const std::string& path, const LoadOptions& options = {});

// The ONNX op types the importer converts (each for opsets kMinOpset..kMaxOpset, where
// the operator exists), sorted.
std::vector<std::string> supported_ops();

}  // namespace weft::onnx
