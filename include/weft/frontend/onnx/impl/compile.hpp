// onnx::compile (frontend/onnx/onnx.hpp): an .onnx file imported and built, or its compiled
// module loaded from a cache directory. The cache is keyed by everything that decides the
// module: the file's bytes, the import's and the build's options, the target, the thread
// count the schedules were chosen for, the artifact format and this build of weft; the key
// is stored with the artifact and compared in full when it is loaded, so a hash collision
// or a foreign file only costs a build.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "weft/frontend/onnx/impl/load.hpp"
#include "weft/graph/artifact.hpp"
#include "weft/runtime/bytes.hpp"
#include "weft/runtime/thread_pool.hpp"

namespace weft::onnx {

namespace detail {

inline constexpr char kCacheKeyMetadata[] = "weft.model_cache_key";

// options.cache_dir, else the WEFT_MODEL_CACHE_DIR environment variable, else "" (none).
inline std::string model_cache_dir(const CompileOptions& options) {
    if (!options.cache_dir.empty()) return options.cache_dir;
    const char* env = std::getenv("WEFT_MODEL_CACHE_DIR");
    return env ? env : "";
}

// The tuning records a build with `o` uses (graph::build's order: BuildOptions::records,
// records_file, WEFT_TUNING_RECORDS), as a hash of their text; "" for none.
inline std::string records_fingerprint(const graph::BuildOptions& o) {
    if (o.records) {
        std::string text;
        for (const autotune::Record& r : o.records->all()) text += r.to_json() + "\n";
        return "records " + ::weft::detail::hex64(::weft::detail::hash64(text));
    }
    std::string path = o.records_file;
    if (path.empty())
        if (const char* env = std::getenv("WEFT_TUNING_RECORDS")) path = env;
    if (path.empty()) return "";
    const std::string text =
        ::weft::detail::read_file_limited(path, int64_t(1) << 30, "tuning records", "a records file's size (1 GiB)");
    return "records file " + ::weft::detail::hex64(::weft::detail::hash64(text));
}

// A buffer's type and a hash of its bytes, "float32[1, 3]:0123456789abcdef" (a frozen input's
// or a calibration input's part of the key).
inline std::string buffer_fingerprint(const BufferRef& b) {
    const BufferRef host = b.device().is_cpu() && b.is_compact() ? b : b.copy_to(Device::cpu());
    return host.dtype().str() + graph::shape_str(host.shape()) + ":" +
           ::weft::detail::hex64(::weft::detail::hash64({static_cast<const char*>(host.data()), size_t(host.size_bytes())}));
}

// Everything that decides the module compile() builds from `model` with `o`, as text; none
// where such a module is not cached (it could not be saved, or would not be the same).
inline std::optional<std::string> model_cache_key(std::string_view model, const CompileOptions& o) {
    if (!o.target.is_cpu() || !o.build.allocate) return std::nullopt;
    std::ostringstream k;
    k << "weft model cache 1; artifact format " << graph::kArtifactVersion << "; importer built " << __DATE__ << " "
      << __TIME__ << "\nmodel " << ::weft::detail::hex64(::weft::detail::hash64(model)) << " " << model.size() << "\nload";
    const LoadOptions& l = o.load;
    for (auto& [name, shape] : l.input_shapes) k << " shape " << name << "=" << graph::shape_str(shape);
    for (auto& [name, v] : l.dim_values) k << " dim " << name << "=" << v;
    for (const graph::Symbol& s : l.symbols) k << " symbol " << s.name << "=" << s.min << ".." << s.max;
    for (auto& [name, b] : l.constant_inputs) k << " constant " << name << "=" << buffer_fingerprint(b);
    const graph::Limits& lim = l.limits;
    k << " loops " << l.max_loop_iterations << " limits " << lim.max_rank << "," << lim.max_tensor_elements << ","
      << lim.max_tensor_bytes << "," << lim.max_nodes << "," << lim.max_node_inputs;
    const graph::BuildOptions& b = o.build;
    k << "\nbuild fuse " << b.fuse << " " << b.max_fused_expression << " plan " << b.plan_memory << " passes "
      << b.eliminate_dead_code << b.eliminate_common_subexpressions << b.merge_equal_constants << b.fold_constants
      << b.fold_scale_axis << b.simplify_operators << b.convert_layout << " pretuned " << b.pretuned_records << " "
      << records_fingerprint(b);
    // A tiered build looks for the optimized module (what its kernels become).
    if (b.tier == graph::CompileTier::fast) k << " fast";
    if (b.precision == graph::Precision::bf16) k << " bf16";
    if (b.precision == graph::Precision::int8) {  // (the scales come from the calibration inputs)
        k << " int8 " << b.calibration_percentile;
        for (const auto& [layer, range] : b.activation_ranges) k << " " << layer << "=" << range.first << "," << range.second;
        for (const auto& sample : b.calibration)
            for (auto& [name, v] : sample) k << " " << name << "=" << buffer_fingerprint(v);
    }
    // (The schedules are chosen for the thread count: a module for 2 threads runs slower on 1.)
    k << "\ntarget " << o.target.str() << " " << o.target.triple << " " << o.target.cpu << " " << o.target.features
      << " " << o.target.vector_bits << "\nthreads " << ::weft::num_threads();
    return k.str();
}

}  // namespace detail

graph::Module compile(const std::string& path, const CompileOptions& options) {
    std::shared_ptr<const ::weft::detail::FileBytes> file = detail::read_model_file(path, options.load);
    const std::string dir = detail::model_cache_dir(options);
    const std::optional<std::string> key =
        dir.empty() ? std::nullopt : detail::model_cache_key(file->bytes(), options);
    std::filesystem::path cached;
    if (key) {
        cached = std::filesystem::path(dir) / (::weft::detail::hex64(::weft::detail::hash64(*key)) + ".weft");
        std::error_code ec;
        if (std::filesystem::is_regular_file(cached, ec)) {
            try {
                graph::ArtifactMetadata meta;
                graph::Module m = graph::load_module(cached.string(), &meta);
                if (meta[detail::kCacheKeyMetadata] == *key) return m;
            } catch (const Error&) {
                // A damaged or foreign file (or one for another CPU): built again, replaced.
            }
        }
    }
    graph::Graph g;
    try {
        g = load_from_memory(file->bytes().data(), file->bytes().size(), options.load);
    } catch (const Error& e) {  // the same kind (user, unsupported, internal), the file named
        e.rethrow_with(std::string(e.what()) + " (in '" + path + "')");
    }
    graph::Module m = graph::build(g, options.target, options.build);
    // (A tiered module is not stored: its optimized kernels come later, on a thread of its own.)
    if (key && options.build.tier != graph::CompileTier::tiered) {
        try {
            std::error_code ec;
            std::filesystem::create_directories(dir, ec);
            graph::save(m, cached.string(), {{detail::kCacheKeyMetadata, *key}, {"source", path}});
        } catch (const Error&) {
            // Not cached: a module save refuses (kernels compiled per size) or a directory
            // that cannot be written; the next process builds it again.
        }
    }
    return m;
}

}  // namespace weft::onnx
