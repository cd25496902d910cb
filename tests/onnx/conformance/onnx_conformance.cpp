// ONNX conformance: runs ONNX's backend test data (Debian's libonnx-testdata) through the
// importer and graph::build, and compares every data set's outputs with ONNX's.
//
//   onnx_conformance [--data DIR] [--suites node,simple,...] [--filter SUBSTR]
//                    [--expected FILE] [--update-expected] [--require-data]
//                    [--doc FILE [--doc-section NAME --doc-title TEXT]] [--verbose]
//
// Each case is a folder with model.onnx and test_data_set_*/{input,output}_*.pb. A case is
// "unsupported" when the importer refuses it (weft::onnx::UnsupportedError: an operator,
// attribute or dtype weft does not have), "failed" when it imports but does not build, run
// or match, and "passed" when every data set matches (float32: |got - want| <= 1e-5 +
// 1e-3 |want|; float64: 1e-9 + 1e-6 |want|; integers and bools exactly; NaN matches NaN).
// With --expected, every case listed there must pass (exit 1 otherwise); --update-expected
// rewrites the list with the cases that pass. --doc writes the summary as Markdown: the
// section NAME of FILE (between "<!-- NAME -->" and "<!-- /NAME -->", replaced or appended),
// so that one page reports several sources of cases. Without --require-data a missing DIR
// skips (prints "skipped: "); with it, a missing DIR fails.
#include <weft/frontend/onnx/onnx.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace weft;

namespace {

enum class Status { Passed, Failed, Unsupported };

struct Case {
    std::string id;  // "node/test_abs"
    Status status = Status::Unsupported;
    std::string reason;
    std::vector<std::string> ops;
    double ms = 0;
    bool shaped = false;  // built with each data set's input shapes (symbolic dimensions)
    bool frozen = false;  // passed with its integer inputs frozen as constants
};

std::string one_line(std::string s) {
    if (size_t at = s.find(" (in '"); at != std::string::npos) s = s.substr(0, at);  // the path is the case's
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '|', '/');
    if (s.size() > 300) s = s.substr(0, 297) + "...";
    return s;
}

template <class T>
bool close(T got, T want, double rtol, double atol) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(want)) return std::isnan(got);
        if (std::isinf(want)) return got == want;
        return std::abs(double(got) - double(want)) <= atol + rtol * std::abs(double(want));
    } else {
        return got == want;
    }
}

template <class T>
std::string compare_typed(const BufferRef& got, const BufferRef& want, double rtol, double atol) {
    Buffer<T> g(got), w(want);
    int64_t bad = 0, first = -1;
    const T* gp = g.data();
    const T* wp = w.data();
    for (int64_t i = 0; i < w.size(); ++i)
        if (!close(gp[i], wp[i], rtol, atol)) {
            if (first < 0) first = i;
            ++bad;
        }
    if (!bad) return "";
    std::ostringstream os;
    os << bad << " of " << w.size() << " elements differ; first at flat index " << first << ": got "
       << +gp[first] << ", want " << +wp[first];
    return os.str();
}

float bfloat16_to_float(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
    float f;
    if (e == 31) {
        uint32_t u = sign | 0x7F800000u | (m << 13);
        std::memcpy(&f, &u, 4);
        return f;
    }
    f = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 1024), int(e) - 25);
    return sign ? -f : f;
}

// "" when equal within the tolerance, else what differs.
std::string compare(const BufferRef& got, const BufferRef& want_stored) {
    BufferRef want = want_stored;
    if (got.dtype().is_bfloat() && want.dtype() == DataType::uint(16))  // ONNX 1.12's bfloat16 data
        want = BufferRef(want.data(), got.dtype(), want.shape());
    if (got.dtype() != want.dtype()) return "dtype " + got.dtype().str() + ", want " + want.dtype().str();
    if (got.shape() != want.shape()) {
        // weft has no rank-0 operator results: [1] stands for [].
        bool scalar = got.size() == 1 && want.size() == 1 && (want.shape().empty() || got.shape().empty());
        if (!scalar) return "shape " + graph::shape_str(got.shape()) + ", want " + graph::shape_str(want.shape());
    }
    if (!got.is_compact()) return "the output is not compact";
    DataType t = want.dtype();
    if (t == DataType::float_(32)) return compare_typed<float>(got, want, 1e-3, 1e-5);
    if (t == DataType::float_(64)) return compare_typed<double>(got, want, 1e-6, 1e-9);
    if (t.is_float() && t.bits == 16) {  // float16 / bfloat16 compared as float32
        const bool bf = t.is_bfloat();
        auto widen = [&](const BufferRef& b) {
            BufferRef f = BufferRef::allocate(DataType::float_(32), b.shape());
            const uint16_t* p = static_cast<const uint16_t*>(b.data());
            float* q = static_cast<float*>(f.data());
            for (int64_t i = 0; i < b.size(); ++i) q[i] = bf ? bfloat16_to_float(p[i]) : half_to_float(p[i]);
            return f;
        };
        // A 16-bit result carries 11 (8) significant bits; weft computes in float32 and rounds once.
        return compare_typed<float>(widen(got), widen(want), bf ? 1.6e-2 : 4e-3, 1e-3);
    }
    if (t == DataType::int_(64)) return compare_typed<int64_t>(got, want, 0, 0);
    if (t == DataType::int_(32)) return compare_typed<int32_t>(got, want, 0, 0);
    if (t == DataType::int_(16)) return compare_typed<int16_t>(got, want, 0, 0);
    if (t == DataType::int_(8)) return compare_typed<int8_t>(got, want, 0, 0);
    if (t == DataType::uint(8)) return compare_typed<uint8_t>(got, want, 0, 0);
    if (t == DataType::uint(16)) return compare_typed<uint16_t>(got, want, 0, 0);
    if (t == DataType::uint(32)) return compare_typed<uint32_t>(got, want, 0, 0);
    if (t == DataType::uint(64)) return compare_typed<uint64_t>(got, want, 0, 0);
    if (t.is_bool()) return compare_typed<bool>(got, want, 0, 0);
    return "cannot compare " + t.str();
}

std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
    std::vector<fs::path> r;
    if (!fs::is_directory(dir)) return r;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(prefix, 0) == 0) r.push_back(e.path());
    // input_2 before input_10
    std::sort(r.begin(), r.end(), [](const fs::path& a, const fs::path& b) {
        std::string x = a.filename().string(), y = b.filename().string();
        return x.size() != y.size() ? x.size() < y.size() : x < y;
    });
    return r;
}

Case run_case(const fs::path& dir, const std::string& id) {
    Case c{id};
    auto t0 = std::chrono::steady_clock::now();
    auto done = [&](Status s, std::string why) {
        c.status = s;
        c.reason = one_line(std::move(why));
        c.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return c;
    };
    try {
        onnx::ModelInfo info = onnx::inspect((dir / "model.onnx").string());
        c.ops = info.op_types;
        if (!info.unsupported_ops.empty()) {
            std::string s = "unsupported operator(s):";
            for (const std::string& op : info.unsupported_ops) s += " " + op;
            return done(Status::Unsupported, s);
        }
        const std::string model = (dir / "model.onnx").string();
        // Loads and builds, with `frozen` inputs as constants; "" or why not (status set).
        Status fail = Status::Failed;
        std::map<std::string, graph::TensorType> declared;  // the built graph's inputs
        auto compile = [&](const onnx::LoadOptions& o, graph::Module& m) -> std::string {
            graph::Graph g;
            try {
                g = onnx::load(model, o);
                declared.clear();
                for (graph::Value v : g.inputs()) declared[g.node(v).name] = g.type(v);
            } catch (const onnx::UnsupportedError& e) {
                fail = Status::Unsupported;
                return e.what();
            } catch (const Error& e) {
                fail = Status::Failed;
                return std::string("import: ") + e.what();
            }
            try {
                m = graph::build(g);
            } catch (const Error& e) {
                fail = Status::Failed;
                return std::string("build: ") + e.what();
            }
            return "";
        };
        graph::Module m;
        std::string err = compile({}, m);
        // Inputs that decide shapes (Reshape's shape, Squeeze's axes, OneHot's depth, ...) must
        // be constants: then each data set's integer inputs, and any other the importer names,
        // are frozen (LoadOptions::constant_inputs).
        bool freeze = fail == Status::Unsupported && (err.find("must be a constant, but it is a graph input") != std::string::npos ||
                                                      err.find("depends on the graph input") != std::string::npos);
        // Symbolic dimensions take each data set's shapes (LoadOptions::input_shapes).
        const bool symbolic = fail == Status::Unsupported && err.find("has a symbolic dimension") != std::string::npos;
        if (!err.empty() && !freeze && !symbolic) return done(fail, err);
        std::vector<fs::path> sets = sorted_entries(dir, "test_data_set_");
        if (sets.empty()) return done(Status::Failed, "no test data sets");
        for (const fs::path& set : sets) {
            std::vector<fs::path> ins = sorted_entries(set, "input_"), outs = sorted_entries(set, "output_");
            std::vector<std::pair<std::string, BufferRef>> inputs;
            for (const fs::path& p : ins) {
                std::string name;
                BufferRef loaded = onnx::load_tensor(p.string(), &name);
                inputs.emplace_back(name, loaded);
            }
            if (symbolic) {
                onnx::LoadOptions o;
                for (auto& [name, b] : inputs)
                    if (b.defined()) o.input_shapes[name] = b.shape();
                err = compile(o, m);
                if (!err.empty()) return done(fail, "with the data's shapes: " + err);
                c.shaped = true;
            } else if (freeze) {
                // The integer inputs first; then any other input the error names as one that
                // must be constant (OneHot's float depth), one at a time.
                onnx::LoadOptions o;
                std::vector<std::pair<std::string, BufferRef>> rest;
                for (auto& [name, b] : inputs) {
                    if (!b.defined() || b.dtype().is_int()) o.constant_inputs[name] = b;
                    else rest.emplace_back(name, b);
                }
                err = compile(o, m);
                // Either "(input k, 'name') must be a constant, but it is a graph input" or "a value
                // that must be constant (...) depends on the graph input 'name'".
                while (!err.empty() && (err.find("must be a constant, but it is a graph input") != std::string::npos ||
                                        err.find("depends on the graph input") != std::string::npos)) {
                    auto named = std::find_if(rest.begin(), rest.end(), [&](const auto& in) {
                        return err.find("'" + in.first + "') must be a constant") != std::string::npos ||
                               err.find("depends on the graph input '" + in.first + "'") != std::string::npos;
                    });
                    if (named == rest.end()) break;
                    o.constant_inputs[named->first] = named->second;
                    rest.erase(named);
                    err = compile(o, m);
                }
                inputs = rest;
                if (!err.empty()) return done(fail, "with shape-deciding inputs frozen: " + err);
                c.frozen = true;
            }
            // An input without elements is no input of the module (the importer holds it as a
            // type): its data set entry has nothing to pass.
            std::erase_if(inputs, [&](const auto& in) {
                auto& names = m.input_names();
                return in.second.size() == 0 && std::find(names.begin(), names.end(), in.first) == names.end();
            });
            if (int(inputs.size()) != m.num_inputs())
                return done(Status::Failed, set.filename().string() + ": " + std::to_string(inputs.size()) +
                                                " inputs for a module with " + std::to_string(m.num_inputs()));
            for (size_t k = 0; k < inputs.size(); ++k) {
                auto& [name, loaded] = inputs[k];
                // weft holds ONNX scalars as [1]: view a rank-0 input so (loaded keeps the data).
                BufferRef b = loaded.ndim() == 0 ? BufferRef(loaded.data(), loaded.dtype(), {1}) : loaded;
                auto& names = m.input_names();
                bool by_name = std::find(names.begin(), names.end(), name) != names.end();
                if (auto d = declared.find(name); d != declared.end()) {
                    // ONNX 1.12's data stores bfloat16 tensors as uint16: the same bits.
                    if (d->second.dtype.is_bfloat() && b.dtype() == DataType::uint(16))
                        b = BufferRef(b.data(), d->second.dtype, b.shape());
                    // Data of another shape than the model declares (ONNX 1.12's CastLike cases give
                    // `like` as [1] for a declared [3, 4]): the case, not weft, is inconsistent.
                    if (d->second.shape != b.shape())
                        return done(Status::Unsupported, "the data's input '" + name + "' is " + graph::shape_str(b.shape()) +
                                                             " where the model declares " + graph::shape_str(d->second.shape));
                }
                try {
                    if (by_name) m.set_input(name, b);
                    else m.set_input(int(k), b);
                } catch (const Error& e) {
                    return done(Status::Failed, set.filename().string() + ": input " + std::to_string(k) + ": " + e.what());
                }
            }
            m.run();
            if (int(outs.size()) != m.num_outputs())
                return done(Status::Failed, set.filename().string() + ": " + std::to_string(outs.size()) +
                                                " expected outputs for a module with " + std::to_string(m.num_outputs()));
            for (size_t k = 0; k < outs.size(); ++k) {
                std::string name;
                BufferRef want = onnx::load_tensor(outs[k].string(), &name);
                auto& names = m.output_names();
                bool by_name = std::find(names.begin(), names.end(), name) != names.end();
                const BufferRef& got = by_name ? m.get_output(name) : m.get_output(int(k));
                std::string diff = compare(got, want);
                if (!diff.empty())
                    return done(Status::Failed, set.filename().string() + " output '" +
                                                    (by_name ? name : std::to_string(k)) + "': " + diff);
            }
        }
        return done(Status::Passed, "");
    } catch (const std::exception& e) {
        return done(Status::Failed, e.what());
    }
}

const char* status_name(Status s) {
    return s == Status::Passed ? "passed" : s == Status::Failed ? "FAILED" : "unsupported";
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> r;
    std::stringstream ss(s);
    for (std::string x; std::getline(ss, x, sep);)
        if (!x.empty()) r.push_back(x);
    return r;
}

// Replaces the section `name` of the Markdown file at `path` (or appends it; the page's
// introduction comes first when the file is new).
void write_doc_section(const std::string& path, const std::string& name, const std::string& text) {
    std::string page;
    if (std::ifstream f(path); f) page.assign(std::istreambuf_iterator<char>(f), {});
    if (page.empty())
        page = "# ONNX conformance\n\n"
               "ONNX's test cases run through `weft::onnx::load`, `graph::build` and `graph::Module::run` by "
               "`tests/onnx/conformance/onnx_conformance.cpp`; every data set's outputs compared with ONNX's "
               "(float32: |got - want| <= 1e-5 + 1e-3 |want|, float64: 1e-9 + 1e-6 |want|, float16: 1e-3 + 4e-3 "
               "|want|, bfloat16: 1e-3 + 1.6e-2 |want|, integers and bools exactly). *Unsupported*: the importer refuses the model (an operator, "
               "attribute or dtype weft does not have; `weft::onnx::UnsupportedError`). *Failed*: imported, but it "
               "did not build, run or match. Each section is written by `onnx_conformance --doc "
               "docs/onnx-conformance.md --doc-section NAME` (docs/onnx.md says how).\n\n";
    const std::string open = "<!-- " + name + " -->\n", close = "<!-- /" + name + " -->\n";
    const std::string section = open + text + close;
    size_t a = page.find(open), b = page.find(close);
    if (a != std::string::npos && b != std::string::npos && b > a) page.replace(a, b + close.size() - a, section);
    else page += (page.back() == '\n' ? "" : "\n") + section;
    std::ofstream(path) << page;
}

}  // namespace

int main(int argc, char** argv) {
    std::string data = "/usr/share/libonnx-testdata/data";
    std::vector<std::string> suites{"node", "pytorch-converted", "pytorch-operator", "simple"};
    std::string filter, expected_path, doc_path, doc_section = "debian",
        doc_title = "ONNX's backend test data (Debian's `libonnx-testdata` 1.12)";
    bool update = false, verbose = false, require_data = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "onnx_conformance: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--data") data = next();
        else if (a == "--suites") suites = split(next(), ',');
        else if (a == "--filter") filter = next();
        else if (a == "--expected") expected_path = next();
        else if (a == "--update-expected") update = true;
        else if (a == "--doc") doc_path = next();
        else if (a == "--doc-section") doc_section = next();
        else if (a == "--doc-title") doc_title = next();
        else if (a == "--require-data") require_data = true;
        else if (a == "--verbose" || a == "-v") verbose = true;
        else {
            std::cerr << "usage: onnx_conformance [--data DIR] [--suites a,b] [--filter SUBSTR] [--expected FILE]"
                         " [--update-expected] [--require-data] [--doc FILE [--doc-section NAME --doc-title TEXT]]"
                         " [--verbose]\n";
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    if (!fs::is_directory(data)) {
        if (require_data) {
            std::cerr << "onnx_conformance: no test data at " << data << "\n";
            return 2;
        }
        std::cout << "skipped: no ONNX test data at " << data << " (apt-get install libonnx-testdata)\n";
        return 0;
    }

    std::vector<Case> cases;
    auto t0 = std::chrono::steady_clock::now();
    for (const std::string& suite : suites) {
        std::vector<fs::path> dirs = sorted_entries(fs::path(data) / suite, "");
        std::sort(dirs.begin(), dirs.end());
        for (const fs::path& d : dirs) {
            if (!fs::exists(d / "model.onnx")) continue;
            std::string id = suite + "/" + d.filename().string();
            if (!filter.empty() && id.find(filter) == std::string::npos) continue;
            cases.push_back(run_case(d, id));
            const Case& c = cases.back();
            if (verbose || c.status == Status::Failed)
                std::cout << status_name(c.status) << "  " << c.id << "  (" << int(c.ms) << " ms)"
                          << (c.reason.empty() ? "" : "  " + c.reason) << "\n";
        }
    }
    double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // ---- summary ----
    // Cases that need strings, maps or training, which the issue lets leave the count (an
    // unsupported case whose reason names them): counted apart, and the pass rate is of the rest.
    auto excluded = [](const Case& c) {
        if (c.status != Status::Unsupported) return false;
        for (const char* mark : {"element type string", "String", "TfIdfVectorizer", "RegexFullMatch", "ai.onnx.ml:",
                                 "ai.onnx.preview.training:", "in training mode"})
            if (c.reason.find(mark) != std::string::npos) return true;
        return false;
    };
    std::map<std::string, std::array<int, 4>> per_suite;
    std::map<std::string, std::array<int, 3>> per_op;
    for (const Case& c : cases) {
        int k = excluded(c) ? 3 : int(c.status);
        per_suite[c.id.substr(0, c.id.find('/'))][size_t(k)]++;
        for (const std::string& op : c.ops) per_op[op][size_t(std::min(k, 2))]++;
    }
    std::array<int, 4> all{};
    for (auto& [s, n] : per_suite)
        for (int k = 0; k < 4; ++k) all[size_t(k)] += n[size_t(k)];
    std::ostringstream table;
    table << "| suite | cases | passed | failed | unsupported | strings, maps, training | passed of the rest |\n"
             "|---|---:|---:|---:|---:|---:|---:|\n";
    auto row = [&](const std::string& name, const std::array<int, 4>& n) {
        const int rest = n[0] + n[1] + n[2];
        table << "| " << name << " | " << rest + n[3] << " | " << n[0] << " | " << n[1] << " | " << n[2] << " | " << n[3]
              << " | " << (rest ? (1000 * n[0] / rest) / 10.0 : 0.0) << "% |\n";
    };
    for (auto& [s, n] : per_suite) row(s, n);
    row("**all**", all);
    std::cout << "\n" << table.str() << "\n" << cases.size() << " cases in " << total_s << " s\n";

    int status = 0;
    std::set<std::string> passing;
    for (const Case& c : cases)
        if (c.status == Status::Passed) passing.insert(c.id);
    if (!expected_path.empty() && !update) {
        std::ifstream f(expected_path);
        if (!f) {
            std::cerr << "onnx_conformance: cannot read " << expected_path << "\n";
            return 2;
        }
        std::set<std::string> seen;
        std::vector<std::string> regressed;
        int listed = 0;
        for (std::string line; std::getline(f, line);) {
            if (line.empty() || line[0] == '#') continue;
            if (!filter.empty() && line.find(filter) == std::string::npos) continue;
            if (std::find(suites.begin(), suites.end(), line.substr(0, line.find('/'))) == suites.end()) continue;
            ++listed;
            seen.insert(line);
            if (!passing.count(line)) regressed.push_back(line);
        }
        for (const std::string& r : regressed) {
            auto it = std::find_if(cases.begin(), cases.end(), [&](const Case& c) { return c.id == r; });
            std::cout << "REGRESSION: " << r << " is in the expected-pass list but "
                      << (it == cases.end() ? "was not found" : std::string(status_name(it->status)) + ": " + it->reason)
                      << "\n";
        }
        int fresh = 0;
        for (const std::string& p : passing)
            if (!seen.count(p)) {
                if (verbose) std::cout << "new pass (not in the list): " << p << "\n";
                ++fresh;
            }
        std::cout << listed << " expected to pass, " << regressed.size() << " regressed, " << fresh
                  << " passing cases not in the list (--update-expected adds them)\n";
        if (!regressed.empty()) status = 1;
    }
    if (update && !expected_path.empty()) {
        std::ofstream f(expected_path);
        f << "# ONNX backend test cases that pass (onnx_conformance --update-expected writes this).\n"
             "# The CTest onnx_conformance fails when one of them does not.\n";
        for (const std::string& p : passing) f << p << "\n";
        std::cout << "wrote " << passing.size() << " cases to " << expected_path << "\n";
    }

    if (!doc_path.empty()) {
        std::ostringstream d;
        d << "## " << doc_title << "\n\n" << table.str() << "\n";
        std::vector<std::string> frozen;
        for (const Case& c : cases)
            if (c.status == Status::Passed && c.frozen) frozen.push_back(c.id);
        d << frozen.size()
          << " of the passing cases feed a shape-deciding input (Reshape's shape, Squeeze's axes, Expand's shape, "
             "...) as a graph input; weft's shapes are static, so the runner freezes each data set's integer "
             "inputs, and any other the importer names as one that must be constant (OneHot's float depth), as "
             "constants (`LoadOptions::constant_inputs`) and builds once per data set:";
        for (const std::string& f : frozen) d << " `" << f.substr(f.find('/') + 1) << "`";
        d << ".\n\n";
        d << "### Per operator\n\nA case counts for every operator its model uses.\n\n"
             "| operator | passed | failed | unsupported |\n|---|---:|---:|---:|\n";
        for (auto& [op, n] : per_op)
            if (n[0] + n[1] > 0) d << "| " << op << " | " << n[0] << " | " << n[1] << " | " << n[2] << " |\n";
        d << "\n### Left out of the count\n\nCases that need strings, maps or training operators (the issue "
             "lets them leave the count; the last column of the table is the pass rate without them):";
        for (const Case& c : cases)
            if (excluded(c)) d << " `" << c.id.substr(c.id.find('/') + 1) << "`";
        d << ".\n";
        d << "\n### Failed cases\n\n";
        int nf = 0;
        for (const Case& c : cases)
            if (c.status == Status::Failed) {
                d << "- `" << c.id << "`: " << c.reason << "\n";
                ++nf;
            }
        if (!nf) d << "None.\n";
        d << "\n### Unsupported\n\nOperators that make cases unsupported (cases using each):\n\n";
        std::map<std::string, int> unsup_ops;
        std::map<std::string, std::vector<std::string>> other;
        for (const Case& c : cases)
            if (c.status == Status::Unsupported) {
                const std::string tag = "unsupported operator(s): ";
                if (c.reason.rfind(tag, 0) == 0) {
                    for (const std::string& op : split(c.reason.substr(tag.size()), ' ')) unsup_ops[op]++;
                } else {
                    other[c.reason].push_back(c.id);
                }
            }
        bool first = true;
        for (auto& [op, n] : unsup_ops) {
            d << (first ? "" : ", ") << op << " (" << n << ")";
            first = false;
        }
        d << "\n\nCases whose operators are all supported but that use something else the importer refuses:\n\n";
        for (auto& [why, ids] : other) {
            d << "- " << ids.size() << " case(s), e.g. `" << ids[0] << "`: " << why << "\n";
        }
        write_doc_section(doc_path, doc_section, d.str());
        std::cout << "wrote " << doc_path << "\n";
    }
    return status;
}
