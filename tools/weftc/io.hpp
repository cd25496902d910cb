// weftc: a module's inputs (from .npz / .npy files or random) and outputs (summaries, files),
// and timing runs.
#pragma once
#include "command_line.hpp"

namespace weftc {

// ---- inputs and outputs ------------------------------------------------------------------

inline void fill_random(const BufferRef& b, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 9), bit(0, 1);
    char* p = static_cast<char*>(b.data());
    for (int64_t i = 0; i < b.size(); ++i) {
        DataType t = b.dtype();
        if (t == DataType::float_(32)) reinterpret_cast<float*>(p)[i] = float(real(rng));
        else if (t == DataType::float_(64)) reinterpret_cast<double*>(p)[i] = real(rng);
        else if (t.is_bool()) reinterpret_cast<uint8_t*>(p)[i] = uint8_t(bit(rng));
        else {
            int64_t v = small(rng);
            std::memcpy(p + i * t.bytes(), &v, size_t(t.bytes()));  // little-endian: the low bytes
        }
    }
}

// Sets every input of m: from `path` (.npz by name, or .npy for one input; at most
// max_file_bytes) or random. Returns the inputs used.
inline NamedBuffers set_inputs(graph::Module& m, const std::string& path, uint64_t seed, int64_t max_file_bytes) {
    NamedBuffers used;
    if (path.empty()) {
        for (int i = 0; i < m.num_inputs(); ++i) {
            // A CUDA module's inputs are device memory: fill a host copy and set it.
            BufferRef host = m.device().is_cpu() ? m.input(i) : BufferRef::allocate(m.input(i).dtype(), m.input(i).shape());
            fill_random(host, seed + uint64_t(i));
            if (!m.device().is_cpu()) m.set_input(i, host);
            used.emplace_back(m.input_names()[size_t(i)], host);
        }
        return used;
    }
    check_exists(path);
    NamedBuffers given;
    bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (npy) {
        if (m.num_inputs() != 1)
            fail(detail::concat("'", path, "' is one array but the model has ", m.num_inputs(),
                                " inputs; give an .npz with one array per input"));
        given.emplace_back(m.input_names()[0], weftc::load_npy(path, max_file_bytes));
    } else {
        given = weftc::load_npz(path, max_file_bytes);
    }
    std::string names;
    for (auto& [n, b] : given) names += (names.empty() ? "" : ", ") + n;
    bool positional = given.size() == size_t(m.num_inputs());
    for (size_t i = 0; i < given.size() && positional; ++i) positional = given[i].first == "arr_" + std::to_string(i);
    for (int i = 0; i < m.num_inputs(); ++i) {
        const std::string& name = m.input_names()[size_t(i)];
        const BufferRef* b = nullptr;
        for (auto& [n, buf] : given)
            if (n == name) b = &buf;
        if (!b && positional) b = &given[size_t(i)].second;
        if (!b) fail("'" + path + "' has no array named '" + name + "' (it has: " + names + ")");
        const BufferRef& want = m.input(i);
        if (b->dtype() != want.dtype())
            fail("input '" + name + "': the model takes " + type_str(want) + ", '" + path + "' has " + type_str(*b));
        BufferRef data = *b;
        if (b->shape() != want.shape() && m.symbols().empty()) {
            // A rank-0 array (or any single element) feeds a [1] input.
            if (b->size() == 1 && want.size() == 1) data = BufferRef(b->data(), b->dtype(), want.shape());
            else
                fail("input '" + name + "': the model takes " + type_str(want) + ", '" + path + "' has " + type_str(*b));
        }
        try {  // (a module with symbolic dimensions checks the extents against their bounds)
            m.set_input(i, data);
        } catch (const Error& e) {
            fail("input '" + name + "' from '" + path + "': " + ::weft::detail::unprefixed(e.what()));
        }
        used.emplace_back(name, m.device().is_cpu() ? m.input(i) : data);
    }
    for (auto& [n, buf] : given) {
        bool known = positional;
        for (auto& name : m.input_names()) known = known || n == name;
        if (!known) std::fprintf(stderr, "weftc: warning: '%s' has an array '%s' that is no model input (ignored)\n",
                                 path.c_str(), n.c_str());
    }
    return used;
}

inline NamedBuffers outputs_of(const graph::Module& m) {
    NamedBuffers out;
    for (int i = 0; i < m.num_outputs(); ++i)  // a CUDA module's outputs copied to the host
        out.emplace_back(m.output_names()[size_t(i)], m.device().is_cpu() ? m.get_output(i) : m.get_output_host(i));
    return out;
}

inline double element(const BufferRef& b, int64_t i) {
    const char* p = static_cast<const char*>(b.data());
    DataType t = b.dtype();
    if (t == DataType::float_(32)) return reinterpret_cast<const float*>(p)[i];
    if (t == DataType::float_(64)) return reinterpret_cast<const double*>(p)[i];
    if (t.is_bool() || t == DataType::uint(8)) return reinterpret_cast<const uint8_t*>(p)[i];
    if (t == DataType::int_(8)) return reinterpret_cast<const int8_t*>(p)[i];
    if (t == DataType::int_(16)) return reinterpret_cast<const int16_t*>(p)[i];
    if (t == DataType::uint(16)) return reinterpret_cast<const uint16_t*>(p)[i];
    if (t == DataType::int_(32)) return reinterpret_cast<const int32_t*>(p)[i];
    if (t == DataType::uint(32)) return reinterpret_cast<const uint32_t*>(p)[i];
    if (t == DataType::int_(64)) return double(reinterpret_cast<const int64_t*>(p)[i]);
    if (t == DataType::uint(64)) return double(reinterpret_cast<const uint64_t*>(p)[i]);
    return 0;
}

inline void print_summary(const std::string& name, const BufferRef& b) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    int64_t argmax = 0;
    for (int64_t i = 0; i < b.size(); ++i) {
        double v = element(b, i);
        lo = std::min(lo, v);
        if (v > hi) hi = v, argmax = i;
        sum += v;
    }
    std::printf("%s: %s  min %.6g  max %.6g (at %lld)  mean %.6g\n  [", name.c_str(), type_str(b).c_str(), lo, hi,
                (long long)argmax, sum / double(b.size()));
    for (int64_t i = 0; i < std::min<int64_t>(b.size(), 8); ++i) std::printf("%s%.6g", i ? ", " : "", element(b, i));
    std::printf("%s]\n", b.size() > 8 ? ", ..." : "");
}

inline void write_outputs(const std::string& path, const NamedBuffers& outputs) {
    bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (npy) {
        if (outputs.size() != 1)
            fail(detail::concat("'", path, "' is one array but the model has ", outputs.size(),
                                " outputs; write an .npz"));
        weftc::save_npy(path, outputs[0].second);
    } else {
        weftc::save_npz(path, outputs);
    }
}

struct Stats {
    double mean = 0, median = 0, p90 = 0, min = 0, max = 0, stddev = 0;
};

inline Stats stats_of(std::vector<double> t) {
    Stats s;
    if (t.empty()) return s;
    std::sort(t.begin(), t.end());
    for (double x : t) s.mean += x;
    s.mean /= double(t.size());
    for (double x : t) s.stddev += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(s.stddev / double(t.size()));
    s.min = t.front();
    s.max = t.back();
    s.median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    s.p90 = t[std::min(t.size() - 1, size_t(std::ceil(0.9 * double(t.size()))) - 1)];
    return s;
}

inline std::vector<double> time_runs(graph::Module& m, int repeat) {
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        auto start = Clock::now();
        m.run();
        if (m.device().is_cuda()) m.cuda_stream().synchronize();  // a CUDA run returns at launch
        times.push_back(ms_since(start));
    }
    return times;
}

}  // namespace weftc
