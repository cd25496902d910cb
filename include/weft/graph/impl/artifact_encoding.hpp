// The artifact's encoding (graph/artifact.hpp, format in docs/weftc.md): its value writer and
// the checked reader, attributes, the memory plan read back and checked, the CPU features a
// kernel needs. The saving and loading of a Module over them: graph/impl/artifact.hpp.
#pragma once
#include <algorithm>
#include <cstring>
#include <queue>
#include <sstream>

#include "weft/graph/artifact.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/runtime/bytes.hpp"

namespace weft::graph::detail {

// The artifact's values: ByteWriter's, plus dtypes, shapes and id lists.
class ArtifactWriter : public ::weft::detail::ByteWriter {
public:
    void dtype(DataType t) {
        u8(uint8_t(t.code));
        u8(t.bits);
        pod(t.lanes);
    }
    void shape(const std::vector<int64_t>& s) {
        u32(uint32_t(s.size()));
        for (int64_t d : s) i64(d);
    }
    void ints(const std::vector<int>& v) {
        u32(uint32_t(v.size()));
        for (int x : v) i32(x);
    }
};

// Reads what ArtifactWriter wrote; anything that does not fit or make sense is a weft::Error
// naming the file, what was being read and where.
class ArtifactReader {
public:
    ArtifactReader(std::string_view data, std::string source) : in_(data), source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& why) const {
        ::weft::detail::throw_user_error("graph::load_module: '" + source_ + "' is not a valid weft artifact: " + why);
    }
    [[noreturn]] void truncated(const char* what) const {
        fail(::weft::detail::concat("it ends inside ", what, " (at byte ", in_.position() + kArtifactHeaderBytes, " of ",
                                    in_.size() + kArtifactHeaderBytes, "): truncated"));
    }
    template <class T>
    T pod(const char* what) {
        std::optional<T> v = in_.pod<T>();
        if (!v) truncated(what);
        return *v;
    }
    uint8_t u8(const char* what) { return pod<uint8_t>(what); }
    uint32_t u32(const char* what) { return pod<uint32_t>(what); }
    int32_t i32(const char* what) { return pod<int32_t>(what); }
    int64_t i64(const char* what) { return pod<int64_t>(what); }
    // A count of items of at least `min_bytes` each: never more than the bytes left allow.
    size_t count(const char* what, size_t min_bytes) {
        uint32_t n = u32(what);
        if (!in_.has(size_t(n) * min_bytes))
            fail(::weft::detail::concat(what, ": a count of ", n, " does not fit in the bytes left (truncated or corrupt)"));
        return n;
    }
    std::string_view bytes(const char* what) {
        std::optional<std::string_view> v = in_.bytes();
        if (!v) truncated(what);
        return *v;
    }
    std::string str(const char* what) { return std::string(bytes(what)); }
    // What ArtifactWriter::aligned_bytes wrote at 64 bytes from the file's start.
    std::string_view aligned_bytes(const char* what) {
        std::optional<std::string_view> v = in_.aligned_bytes(64, kArtifactHeaderBytes);
        if (!v) truncated(what);
        return *v;
    }
    DataType dtype(const char* what) {
        uint8_t code = u8(what), bits = u8(what);
        uint16_t lanes = pod<uint16_t>(what);
        if (code > uint8_t(DataType::Code::Handle) || lanes != 1 || !(bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64))
            fail(::weft::detail::concat(what, ": not a tensor element type (code ", int(code), ", ", int(bits), " bits, ",
                                        lanes, " lanes)"));
        return DataType(DataType::Code(code), bits, lanes);
    }
    std::vector<int64_t> shape(const char* what) {
        size_t rank = count(what, 8);
        if (rank > kArtifactMaxRank) fail(::weft::detail::concat(what, ": rank ", rank));
        std::vector<int64_t> s;
        const int64_t limit = int64_t(1) << 44;  // elements: bytes() cannot overflow
        int64_t elements = 1;
        for (size_t i = 0; i < rank; ++i) {
            int64_t d = i64(what);
            if (d <= 0 || d > limit / elements) fail(::weft::detail::concat(what, ": dimension ", d, " (too large)"));
            elements *= d;
            s.push_back(d);
        }
        return s;
    }
    // Node ids, each in [lo, hi).
    std::vector<int> ids(const char* what, int lo, int hi) {
        size_t n = count(what, 4);
        std::vector<int> v;
        for (size_t i = 0; i < n; ++i) {
            int id = i32(what);
            if (id < lo || id >= hi) fail(::weft::detail::concat(what, ": node id ", id, " is out of range"));
            v.push_back(id);
        }
        return v;
    }
    bool done() const { return in_.done(); }

private:
    ::weft::detail::ByteReader in_;
    std::string source_;
};

inline void write_attr(ArtifactWriter& w, const AttrValue& v) {
    w.u8(uint8_t(v.index()));
    if (auto* i = std::get_if<int64_t>(&v)) w.i64(*i);
    else if (auto* d = std::get_if<double>(&v)) w.pod(*d);
    else if (auto* s = std::get_if<std::string>(&v)) w.str(*s);
    else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
        w.u32(uint32_t(is->size()));
        for (int64_t x : *is) w.i64(x);
    } else {
        auto& ds = std::get<std::vector<double>>(v);
        w.u32(uint32_t(ds.size()));
        for (double x : ds) w.pod(x);
    }
}

inline AttrValue read_attr(ArtifactReader& r) {
    switch (r.u8("an attribute")) {
        case 0: return r.i64("an attribute");
        case 1: return r.pod<double>("an attribute");
        case 2: return r.str("an attribute");
        case 3: {
            std::vector<int64_t> v(r.count("an attribute", 8));
            for (auto& x : v) x = r.i64("an attribute");
            return v;
        }
        case 4: {
            std::vector<double> v(r.count("an attribute", 8));
            for (auto& x : v) x = r.pod<double>("an attribute");
            return v;
        }
        default: r.fail("an attribute of an unknown kind");
    }
}

// The artifact's memory plan (a count, then a node id and an offset per planned tensor),
// checked against the lifetimes build() plans with (`planned`, from the loaded kernels): each
// kernel's output placed once and nothing else placed, every tensor inside the arena, and no
// two tensors live at one kernel sharing a byte, but for an output written in place over an
// input that dies there, at the same offset. Without this a plan that put every tensor at
// offset 0 would load and run, each kernel overwriting what a later one still reads.
inline MemoryPlan read_memory_plan(ArtifactReader& r, const ModuleAccess::State& st, const std::vector<int>& new_id,
                                   const PlanRequests& planned, int64_t arena_bytes) {
    const Graph& g = st.graph;
    MemoryPlan plan;
    plan.arena_bytes = arena_bytes;
    plan.offsets.assign(planned.requests.size(), 0);
    std::vector<bool> placed(planned.requests.size(), false);
    for (size_t i = 0, n = r.count("the memory plan", 12); i < n; ++i) {
        int id = r.i32("the memory plan");
        int64_t offset = r.i64("the memory plan");
        if (id < 0 || size_t(id) >= new_id.size()) r.fail(::weft::detail::concat("the memory plan places node ", id));
        const int node = new_id[size_t(id)], request = planned.request_of[size_t(node)];
        if (request < 0) r.fail("the memory plan places '" + g.node(node).name + "', which no kernel computes");
        if (placed[size_t(request)]) r.fail("the memory plan places '" + g.node(node).name + "' twice");
        placed[size_t(request)] = true;
        plan.offsets[size_t(request)] = offset;
    }
    std::vector<std::string> names;  // request k is kernel k's output
    for (size_t k = 0; k < st.groups.size(); ++k) {
        names.push_back(g.node(st.groups[k].root()).name);
        if (!placed[k]) r.fail("the memory plan does not place '" + names.back() + "', which kernel '" + st.infos[k].name +
                               "' computes");
    }
    std::string why;
    if (!plan_is_valid(planned.requests, plan, &why, names))
        r.fail("the memory plan is unsafe (steps are kernels in execution order): " + why);
    return plan;
}

// "+avx2" features of `artifact` that `host` lacks, comma-separated.
inline std::string missing_features(const std::string& artifact, const std::string& host) {
    std::string missing;
    std::stringstream in(artifact);
    for (std::string f; std::getline(in, f, ',');) {
        if (f.size() < 2 || f[0] != '+') continue;
        if (("," + host + ",").find("," + f + ",") == std::string::npos) missing += (missing.empty() ? "" : ",") + f.substr(1);
    }
    return missing;
}

}  // namespace weft::graph::detail
