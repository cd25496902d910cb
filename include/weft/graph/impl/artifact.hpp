// Definitions of graph/artifact.hpp: a Module's parts written to bytes and read back (the
// encoding's pieces: graph/impl/artifact_encoding.hpp).
#pragma once
#include <algorithm>
#include <cstring>
#include <fstream>
#include <queue>
#include <sstream>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/graph/artifact.hpp"
#include "weft/graph/impl/artifact_encoding.hpp"
#include "weft/graph/impl/artifact_symbolic.hpp"
#include "weft/graph/impl/loop_kernel.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/runtime/bytes.hpp"

namespace weft::graph {

uint64_t artifact_checksum(std::string_view payload) { return ::weft::detail::hash64(payload); }

std::vector<Placement> memory_placements(const Module& m) {
    const detail::ModuleAccess::State& s = detail::ModuleAccess::state(m);
    std::vector<Placement> result;
    if (!s.arena.defined()) return result;
    const char* base = static_cast<const char*>(s.arena.data());
    for (int id = 0; id < s.graph.size(); ++id) {
        // (With symbolic dimensions, the storage at the symbols' max, not the current views.)
        const BufferRef& b = s.symbolic.empty() ? s.values[size_t(id)] : s.storage[size_t(id)];
        const char* p = static_cast<const char*>(b.data());
        if (b.defined() && p >= base && p < base + s.arena.size_bytes())
            result.push_back({id, int64_t(p - base), b.size_bytes()});
    }
    std::stable_sort(result.begin(), result.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    return result;
}

namespace detail {

// A loop kernel's module from its record: the body's artifact (checked against the kernel's
// hash) loaded, wrapped for the loop node `n`. Each level's bytes hold the next: a bound on
// the depth, not on the size, keeps a hostile file from nesting loops until the stack runs out.
inline std::shared_ptr<const KernelModule> read_loop_body(ArtifactReader& r, const Node& n, const std::string& kernel,
                                                          uint64_t hash, double compile_ms) {
    const std::string body = r.str("a loop's body");
    if (::weft::detail::fnv1a64(body) != hash)
        r.fail("kernel '" + kernel + "': its loop body does not match the hash saved with its signature");
    static thread_local int depth = 0;
    if (depth >= kMaxArtifactLoopDepth) r.fail(::weft::detail::concat("loops nest deeper than ", kMaxArtifactLoopDepth));
    struct Nested {
        Nested() { ++depth; }
        ~Nested() { --depth; }
    } nested;
    try {
        return std::make_shared<LoopKernelModule>(load_module_from_memory(body), loop_spec(n), compile_ms);
    } catch (const Error& e) {
        r.fail("kernel '" + kernel + "': its loop body: " + ::weft::detail::unprefixed(e.what()));
    }
}

}  // namespace detail

std::string save_to_memory(const Module& m, const ArtifactMetadata& metadata) {
    // A tiered build is saved with its optimized kernels (waiting for them).
    detail::ModuleAccess::state(m).adopt_optimized(true);
    const detail::ModuleAccess::State& s = detail::ModuleAccess::state(m);
    // An artifact holds CPU object code (linked back into the JIT on load); a CUDA module's
    // kernels are PTX for a device, which this format does not carry.
    WEFT_CHECK(!s.target.is_cuda(), "graph::save: this module was built for ", s.target.str(),
               "; artifacts hold CPU object code only. Save a module built for the CPU (Target::host()), or keep "
               "the graph (or ONNX model) and call graph::build(g, Target::cuda()) where it runs");
    // Kernels compiled per size need the graph the module was built from at each new size,
    // which an artifact does not hold.
    if (!s.per_size.empty()) {
        std::string names;
        for (const Symbol& sym : s.symbolic.symbols) names += (names.empty() ? "'" : ", '") + sym.name + "'";
        ::weft::detail::throw_user_error(
            "graph::save: this module compiles some kernels per size of its symbols " + names +
            " (a convolution over a symbolic image size), which needs the model at each new size; an artifact holds "
            "compiled kernels only. Give those symbols fixed values (weftc compile --input-shape) to save it");
    }
    const Graph& g = s.graph;
    detail::ArtifactWriter w;
    w.out().assign(kArtifactHeaderBytes, '\0');  // the header, filled in at the end
    w.str("weft");
    w.u32(uint32_t(metadata.size()));
    for (auto& [k, v] : metadata) {
        w.str(k);
        w.str(v);
    }
    w.u8(uint8_t(s.target.kind));
    w.str(s.target.triple);
    w.str(s.target.cpu);
    w.str(s.target.features);
    w.i32(s.target.vector_bits);
    // The graph, node by node.
    w.u32(uint32_t(g.size()));
    for (const Node& n : g.nodes()) {
        WEFT_CHECK(n.type.shape.size() <= kArtifactMaxRank, "graph::save: ", describe(n), " has ",
                   n.type.shape.size(), " dimensions; artifacts hold tensors of up to ", kArtifactMaxRank,
                   " (graph::kArtifactMaxRank)");
        w.str(n.op);
        w.str(n.name);
        w.u32(uint32_t(n.inputs.size()));
        for (Value v : n.inputs) w.i32(v.id);
        // (A loop's body is not saved as a graph: its kernel holds the body's module, below.)
        auto is_graph = [](const auto& item) { return std::holds_alternative<std::shared_ptr<const Graph>>(item.second); };
        w.u32(uint32_t(n.attrs.items().size() - std::count_if(n.attrs.items().begin(), n.attrs.items().end(), is_graph)));
        for (auto& [k, v] : n.attrs.items()) {
            if (std::holds_alternative<std::shared_ptr<const Graph>>(v)) continue;
            w.str(k);
            detail::write_attr(w, v);
        }
        w.dtype(n.type.dtype);
        w.shape(n.type.shape);
        if (n.is_constant()) {
            WEFT_ICHECK(n.value.defined() && n.value.is_compact(), "constant ", n.name, " has no compact data");
            // At a multiple of 64 bytes in the file: a loader that maps it views the data
            // in place, aligned as the kernels' buffers are.
            w.aligned_bytes(n.value.data(), size_t(n.value.size_bytes()), 64, 0);
        }
    }
    w.u32(uint32_t(g.outputs().size()));
    for (auto& [name, v] : g.outputs()) {
        w.str(name);
        w.i32(v.id);
    }
    detail::write_symbolic(w, s.symbolic, g);
    const bool symbolic = !s.symbolic.empty();
    // The kernels in execution order.
    struct StoredObject {
        int kernel = -1;    // the first kernel with the object, which stores it
        uint64_t hash = 0;  // of its bytes
    };
    std::map<const KernelModule*, StoredObject> stored;
    w.u32(uint32_t(s.groups.size()));
    for (size_t k = 0; k < s.groups.size(); ++k) {
        const FusedGroup& group = s.groups[k];
        const Kernel& kernel = s.kernels[k];
        w.ints(group.nodes);
        w.i32(group.master);
        w.u8(uint8_t(group.pattern));
        w.str(s.infos[k].name);
        w.pod(s.infos[k].compile_ms);
        w.str(s.infos[k].workload);
        w.u8(uint8_t(s.infos[k].tunable) | uint8_t(s.infos[k].tuned) << 1);
        w.ints(s.arg_ids[k]);
        if (symbolic) {
            detail::write_sample_run(w, s.samples[k]);
            WEFT_ICHECK(!s.large[k].defined() || s.large_args[k] == s.arg_ids[k], "kernel ", s.infos[k].name,
                        ": its large-size variant takes other arguments");
            detail::write_large_variant(w, s.large[k]);
        }
        const ir::PrimFunc& f = kernel.signature();
        w.str(f.name);
        w.u8(f.fast_math);
        w.u32(uint32_t(f.args.size()));
        // (A symbolic module's kernels take the symbols as scalars, and their tensors' shapes
        // follow from the symbolic section: the loader rebuilds them.)
        for (const ir::KernelArg& a : f.args) detail::write_kernel_arg(w, a, f.name, symbolic);
        // The hash of the kernel's object code, beside its signature, binds the two: the
        // loader refuses an object (or a reference to one) that is not this kernel's.
        // Kernels the cache served share one module: its object is stored once, and the
        // others refer to the first kernel with it.
        // A loop's kernel: its body's module, an artifact of its own.
        if (const detail::LoopKernelModule* loop = detail::as_loop(kernel)) {
            const std::string body = save_to_memory(loop->body());
            w.pod(::weft::detail::fnv1a64(body));
            w.u8(2);
            w.str(body);
            continue;
        }
        auto [object_of, first] = stored.try_emplace(kernel.module().get());
        ObjectCode object;
        if (first) {
            object = kernel.module()->object_code();
            WEFT_CHECK(!object.bytes.empty(), "graph::save: kernel ", f.name,
                       " has no object code to save (its backend keeps none)");
            object_of->second = {int(k), ::weft::detail::fnv1a64(object.bytes)};
        }
        w.pod(object_of->second.hash);
        if (!first) {
            w.u8(1);
            w.i32(object_of->second.kernel);
            continue;
        }
        w.u8(0);
        w.str(object.symbol);
        w.str(object.bytes);
    }
    // The memory plan: where each planned tensor lives in the arena.
    w.i64(s.arena_bytes);  // the plan's size (the allocation is at least 1 byte)
    w.i64(s.naive_bytes);
    std::vector<Placement> placements = memory_placements(m);
    w.u32(uint32_t(placements.size()));
    for (const Placement& p : placements) {
        w.i32(p.node);
        w.i64(p.offset);
    }

    std::string& file = w.out();
    const std::string_view payload = std::string_view(file).substr(kArtifactHeaderBytes);
    const uint64_t size = payload.size(), checksum = artifact_checksum(payload);
    const uint32_t version = kArtifactVersion, reserved = 0;
    std::memcpy(file.data(), kArtifactMagic, 8);
    std::memcpy(file.data() + 8, &version, 4);
    std::memcpy(file.data() + 12, &reserved, 4);
    std::memcpy(file.data() + 16, &size, 8);
    std::memcpy(file.data() + 24, &checksum, 8);
    return std::move(file);
}

void save(const Module& m, const std::string& path, const ArtifactMetadata& metadata) {
    // Written beside and renamed over `path`: a process that loaded the file before keeps
    // its mapping (load_module's constants view it), and a reader never sees half a file.
    const std::string failed = ::weft::detail::write_file_replacing(path, save_to_memory(m, metadata));
    WEFT_CHECK(failed.empty(), "graph::save: ", failed);
}

bool is_artifact_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    return in.read(magic, 8) && std::memcmp(magic, kArtifactMagic, 8) == 0;
}

namespace detail {
Module load_module_from(std::string_view bytes, ArtifactMetadata* metadata, const std::string& source,
                        const std::shared_ptr<const void>& owner);
}

Module load_module(const std::string& path, ArtifactMetadata* metadata, int64_t max_file_bytes) {
    // Mapped, not copied: the constants view the file's pages (64-byte aligned in it).
    std::shared_ptr<const ::weft::detail::FileBytes> file = ::weft::detail::FileBytes::open(
        path, max_file_bytes, "graph::load_module", "the max_file_bytes argument of graph::load_module");
    return detail::load_module_from(file->bytes(), metadata, path, file);
}

Module load_module_from_memory(std::string_view bytes, ArtifactMetadata* metadata, const std::string& source) {
    return detail::load_module_from(bytes, metadata, source, nullptr);
}

// The loader; with an `owner` that keeps `bytes` alive, constants view them instead of
// being copied.
Module detail::load_module_from(std::string_view bytes, ArtifactMetadata* metadata, const std::string& source,
                                const std::shared_ptr<const void>& owner) {
    auto fail = [&](const std::string& why) {
        ::weft::detail::throw_user_error("graph::load_module: '" + source + "' is not a valid weft artifact: " + why);
    };
    if (bytes.size() < 8 || std::memcmp(bytes.data(), kArtifactMagic, 8) != 0)
        fail("it does not start with the magic \"WEFTMODL\" (not a file that weftc compile or graph::save wrote)");
    if (bytes.size() < kArtifactHeaderBytes) fail("the header is truncated");
    uint32_t version;
    uint64_t size, checksum;
    std::memcpy(&version, bytes.data() + 8, 4);
    std::memcpy(&size, bytes.data() + 16, 8);
    std::memcpy(&checksum, bytes.data() + 24, 8);
    if (version != kArtifactVersion)
        ::weft::detail::throw_user_error(::weft::detail::concat(
            "graph::load_module: '", source, "' is a weft artifact of format version ", version, "; this weft reads version ",
            kArtifactVersion, " (compile the model again with this weft)"));
    std::string_view payload = bytes.substr(kArtifactHeaderBytes);
    if (size != payload.size())
        fail(::weft::detail::concat("the header says ", size, " bytes follow it, but ", payload.size(), " do",
                                    payload.size() < size ? " (truncated)" : ""));
    if (artifact_checksum(payload) != checksum) fail("the checksum does not match (the file is corrupt)");

    detail::ArtifactReader r(payload, source);
    if (r.str("the producer") != "weft") r.fail("the producer is not weft");
    ArtifactMetadata meta;
    for (size_t i = 0, n = r.count("the metadata", 16); i < n; ++i) {
        std::string k = r.str("the metadata");
        meta[k] = r.str("the metadata");
    }
    auto st = std::make_shared<detail::ModuleAccess::State>();
    Target& target = st->target;
    if (r.u8("the target") != uint8_t(Target::Kind::CPU)) r.fail("the target is not a CPU");
    target.kind = Target::Kind::CPU;
    target.triple = r.str("the target");
    target.cpu = r.str("the target");
    target.features = r.str("the target");
    target.vector_bits = r.i32("the target");
    const Target host = Target::host();
    std::string missing = detail::missing_features(target.features, host.features);
    WEFT_CHECK(missing.empty(), "graph::load_module: '", source, "' was compiled for a CPU (", target.cpu,
               ") with features this one (", host.cpu, ") lacks: ", missing, "; compile the model on this machine");

    // The graph: nodes as saved, added in a topological order (ids are mapped).
    struct SavedNode {
        std::string op, name;
        std::vector<int> inputs;
        Attrs attrs;
        TensorType type;
        std::string_view data;
    };
    size_t count = r.count("the graph", 40);
    std::vector<SavedNode> saved(count);
    for (size_t i = 0; i < count; ++i) {
        SavedNode& n = saved[i];
        n.op = r.str("a node");
        n.name = r.str("a node");
        n.inputs = [&] {
            size_t k = r.count("a node's inputs", 4);
            std::vector<int> v;
            for (size_t j = 0; j < k; ++j) {
                int id = r.i32("a node's inputs");
                if (id < 0 || size_t(id) >= count) r.fail(::weft::detail::concat("node '", n.name, "' reads node ", id));
                v.push_back(id);
            }
            return v;
        }();
        for (size_t a = 0, na = r.count("a node's attributes", 9); a < na; ++a) {
            std::string key = r.str("an attribute");
            n.attrs.set(key, detail::read_attr(r));
        }
        n.type.dtype = r.dtype("a node's type");
        n.type.shape = r.shape("a node's type");
        if (n.op == "constant") {
            n.data = r.aligned_bytes("a constant's data");
            if (int64_t(n.data.size()) != n.type.bytes())
                r.fail(::weft::detail::concat("constant '", n.name, "' has ", n.data.size(), " bytes of data for ",
                                              n.type.str()));
        }
    }
    // In an order where every node follows its inputs (a graph stored in order keeps it).
    std::vector<std::vector<int>> inputs_of(count);
    for (size_t i = 0; i < count; ++i) inputs_of[i] = saved[i].inputs;
    const std::vector<int> order = smallest_first_order(inputs_of);
    if (order.size() != count) r.fail("the graph has a cycle");
    std::vector<int> new_id(count, -1);
    Graph& g = st->graph;
    for (int id : order) {
        SavedNode& n = saved[size_t(id)];
        Value v;
        try {
            if (n.op == "input") {
                v = g.input(n.name, n.type.shape, n.type.dtype);
            } else if (n.op == "constant") {
                BufferRef data(const_cast<char*>(n.data.data()), n.type.dtype, n.type.shape);
                // A view of the mapped file where it is aligned as kernels' buffers are, else
                // a copy. (Weights read from the file's 4 KiB pages ran as fast as copies in
                // huge pages: benchmarks/RESULTS.md, "Start-up from an artifact".)
                const bool view = owner && reinterpret_cast<uintptr_t>(n.data.data()) % 64 == 0;
                v = view ? g.constant_shared(n.name, BufferRef(owner, data)) : g.constant(n.name, data);
            } else {
                std::vector<Value> ins;
                for (int in : n.inputs) ins.push_back(Value{new_id[size_t(in)]});
                v = g.add_node(n.op, ins, n.attrs, n.name);
            }
        } catch (const Error& e) {
            r.fail("node '" + n.name + "': " + ::weft::detail::unprefixed(e.what()));
        }
        if (g.type(v) != n.type)
            r.fail("node '" + n.name + "' is saved as " + n.type.str() + " but its operator gives " + g.type(v).str());
        new_id[size_t(id)] = v.id;
    }
    auto map_ids = [&](std::vector<int> ids) {
        for (int& id : ids) id = new_id[size_t(id)];
        return ids;
    };
    for (size_t i = 0, n = r.count("the outputs", 12); i < n; ++i) {
        std::string name = r.str("an output");
        int id = r.i32("an output");
        if (id < 0 || size_t(id) >= count) r.fail(::weft::detail::concat("output '", name, "' is node ", id));
        try {
            g.output(Value{new_id[size_t(id)]}, name);
        } catch (const Error& e) {  // a name twice, or a run-time check that is not one bool
            r.fail(::weft::detail::unprefixed(e.what()));
        }
    }
    if (g.outputs().empty()) r.fail("the graph has no outputs");
    const detail::SymbolicShapes symbolic = detail::read_symbolic(r, g, new_id);
    std::vector<detail::SampleRun> runs;

    // The kernels: signatures rebuilt, object code checked against its hash and linked
    // (nothing compiled).
    const int n_nodes = int(count);
    std::vector<uint64_t> object_hashes;  // per kernel, as saved
    std::vector<bool> computed(count, false);  // by an earlier kernel
    for (size_t k = 0, nk = r.count("the kernels", 32); k < nk; ++k) {
        FusedGroup group;
        group.nodes = map_ids(r.ids("a kernel's nodes", 0, n_nodes));
        int master = r.i32("a kernel");
        if (master < -1 || master >= n_nodes) r.fail(::weft::detail::concat("a kernel's master is node ", master));
        group.master = master < 0 ? -1 : new_id[size_t(master)];
        uint8_t pattern = r.u8("a kernel");
        if (pattern > uint8_t(OpPattern::OutEWiseFusable) && pattern != uint8_t(OpPattern::Opaque))
            r.fail("a kernel's fusion pattern is unknown");
        group.pattern = OpPattern(pattern);
        if (group.nodes.empty()) r.fail("a kernel computes no node");
        for (int id : group.nodes)
            if (!g.node(id).is_op()) r.fail("a kernel computes '" + g.node(id).name + "', which is not an operator");
        KernelInfo info;
        info.name = r.str("a kernel's name");
        info.nodes = group.nodes;
        info.master = group.master;
        info.compile_ms = r.pod<double>("a kernel");
        info.workload = r.str("a kernel's workload");
        const uint8_t tuning = r.u8("a kernel");
        if (tuning > 3) r.fail("a kernel's tuning flags are unknown");
        info.tunable = tuning & 1;
        info.tuned = (tuning & 2) != 0;
        // (Symbols passed as scalars have ids -1 - s, derived terms derived_id(j); read_kernel_arg
        // checks which.)
        const int lowest = symbolic.empty() ? 0 : detail::SymbolicShapes::derived_id(symbolic.derived.size()) + 1;
        std::vector<int> arg_ids = r.ids("a kernel's arguments", lowest, n_nodes);
        for (int& id : arg_ids)
            if (id >= 0) id = new_id[size_t(id)];
        if (!symbolic.empty()) {
            runs.push_back(detail::read_sample_run(r, g, symbolic, arg_ids));
            st->large.push_back(detail::read_large_variant(r, g, symbolic, arg_ids, target));
            st->large_args.push_back(st->large.back().defined() ? arg_ids : std::vector<int>{});
        }
        const detail::SymbolicShapes shapes = symbolic.empty() ? symbolic : detail::kernel_shapes(symbolic, runs.back());
        ir::PrimFunc f;
        f.name = r.str("a kernel's signature");
        f.fast_math = r.u8("a kernel's signature") != 0;
        size_t nargs = r.count("a kernel's signature", 16);
        if (nargs != arg_ids.size() || nargs == 0 || arg_ids.back() != group.root())
            r.fail("kernel '" + f.name + "': its signature does not fit its arguments");
        // Kernels run in the order saved, each reading what is there before it: inputs,
        // constants and earlier kernels' outputs (the memory plan's lifetimes assume it).
        for (size_t a = 0; a + 1 < arg_ids.size(); ++a)
            if (arg_ids[a] >= 0 && g.node(arg_ids[a]).is_op() && !computed[size_t(arg_ids[a])])
                r.fail("kernel '" + f.name + "' reads '" + g.node(arg_ids[a]).name + "' before any kernel computes it");
        if (computed[size_t(group.root())]) r.fail("two kernels compute '" + g.node(group.root()).name + "'");
        computed[size_t(group.root())] = true;
        for (size_t a = 0; a < nargs; ++a) f.args.push_back(detail::read_kernel_arg(r, g, symbolic, shapes, arg_ids, a, f.name));
        const uint64_t object_hash = r.pod<uint64_t>("a kernel's object hash");
        std::shared_ptr<const KernelModule> module;
        const uint8_t object_kind = r.u8("a kernel's object code");
        if (object_kind == 2) {  // a loop's body, an artifact of its own
            const Node& n = g.node(group.root());
            std::vector<int> wanted;  // (what the loop's host code indexes: its inputs, then it)
            for (Value v : n.inputs) wanted.push_back(v.id);
            wanted.push_back(group.root());
            if (n.op != "loop" || group.nodes.size() != 1 || arg_ids != wanted)
                r.fail("kernel '" + f.name + "' holds a loop's body but is not the kernel of loop node '" + n.name + "'");
            module = detail::read_loop_body(r, g.node(group.root()), f.name, object_hash, info.compile_ms);
        } else if (object_kind != 0) {  // the object of an earlier kernel
            int earlier = r.i32("a kernel's object code");
            if (earlier < 0 || size_t(earlier) >= k) r.fail(::weft::detail::concat("a kernel refers to kernel ", earlier));
            if (object_hashes[size_t(earlier)] != object_hash)
                r.fail(::weft::detail::concat("kernel '", f.name, "': its object code, that of kernel ", earlier,
                                              " which it refers to, does not match the hash saved with its signature (a "
                                              "reference to the wrong kernel)"));
            module = st->kernels[size_t(earlier)].module();
        } else {
            module = detail::read_object_code(r, f.name, object_hash, target);
        }
        object_hashes.push_back(object_hash);
        st->kernels.emplace_back(std::move(module), std::move(f));
        st->groups.push_back(std::move(group));
        st->infos.push_back(std::move(info));
        st->arg_ids.push_back(std::move(arg_ids));
    }
    // No kernels is fine: every output may be an input or a constant.

    // Storage: inputs their own, constants the graph's, the rest the arena as planned.
    int64_t arena_bytes = r.i64("the memory plan");
    st->naive_bytes = r.i64("the memory plan");
    const int64_t unshared = detail::operator_bytes(g);  // one buffer per operator: no plan needs more
    if (arena_bytes < 0 || arena_bytes > unshared)
        r.fail(::weft::detail::concat("the memory plan's arena of ", arena_bytes, " bytes is larger than all ",
                                      "intermediates together (", unshared, ")"));
    detail::assign_guards(*st);
    const detail::PlanRequests planned = detail::plan_requests(g, st->kernels, st->arg_ids, true, st->guards);
    const MemoryPlan plan = detail::read_memory_plan(r, *st, new_id, planned, arena_bytes);
    if (!r.done()) r.fail("bytes follow the memory plan");
    st->arena = BufferRef::allocate(DataType::uint(8), {std::max<int64_t>(arena_bytes, 1)});
    st->arena_bytes = arena_bytes;
    detail::ModuleAccess::store_inputs_and_constants(*st);
    for (int id = 0; id < g.size(); ++id)
        if (int request = planned.request_of[size_t(id)]; request >= 0)
            st->values[size_t(id)] = BufferRef(static_cast<char*>(st->arena.data()) + plan.offsets[size_t(request)],
                                               g.node(id).type.dtype, g.node(id).type.shape);
    for (size_t k = 0; k < st->groups.size(); ++k)
        for (int id : st->arg_ids[k])  // (checked above: each is an input, a constant or a placed output)
            WEFT_ICHECK(id < 0 || st->values[size_t(id)].defined(), "kernel ", st->infos[k].name, " reads ",
                        g.node(id).name, ", which has no storage");
    st->symbolic = symbolic;
    st->samples = std::move(runs);
    detail::bind_storage(*st);
    for (auto& [name, v] : g.outputs())
        if (!st->values[size_t(v.id)].defined()) r.fail("output '" + name + "' has no storage");
    detail::ModuleAccess::store_outputs(*st);
    if (metadata) *metadata = std::move(meta);
    return detail::ModuleAccess::make(std::move(st));
}

}  // namespace weft::graph
