// What the fuzzers check, shared by fuzz_onnx and fuzz_artifact: any input either works or
// is refused with a weft::Error. Everything else is a finding: a crash or sanitizer report
// (libFuzzer and the sanitizers see those), a hang (libFuzzer's -timeout), another exception
// type (it leaves LLVMFuzzerTestOneInput and aborts), and a weft::InternalError, which is a
// weft::Error but by definition a bug in weft (an invariant that user input broke).
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <weft/weft.hpp>

namespace weft_fuzz {

// Runs f; a user error is an accepted outcome, an internal error aborts with its message.
template <class F>
void works_or_refuses(F&& f) {
    try {
        f();
    } catch (const weft::InternalError& e) {
        std::fprintf(stderr, "fuzz: a weft::InternalError (a bug in weft):\n%s\n", e.what());
        std::abort();
    } catch (const weft::Error&) {
    }
}

// Fills every input of m with `bytes` repeated (a zero-length `bytes` gives zeros), runs m
// once and reads every output. The values come from the fuzzer's own input, so it controls
// indices (Gather's, which weft clamps) and floats (NaN, infinities) too.
inline void run_with_bytes(weft::graph::Module& m, std::string_view bytes) {
    for (int i = 0; i < m.num_inputs(); ++i) {
        const weft::BufferRef& in = m.input(i);
        char* p = static_cast<char*>(in.data());
        const size_t n = size_t(in.size_bytes());
        if (bytes.empty()) {
            std::memset(p, 0, n);
            continue;
        }
        for (size_t at = 0; at < n; at += bytes.size()) std::memcpy(p + at, bytes.data(), std::min(bytes.size(), n - at));
    }
    m.run();
    // A module with symbolic dimensions also runs at their smallest values.
    if (!m.symbols().empty()) {
        for (int i = 0; i < m.num_inputs(); ++i) {
            std::vector<int64_t> shape = m.input(i).shape();
            for (const weft::graph::SymbolicAxis& a : m.symbolic_axes())
                if (a.input == m.input_names()[size_t(i)])
                    for (const weft::graph::Symbol& s : m.symbols())
                        if (s.name == a.symbol) shape[size_t(a.axis)] = s.min;
            m.set_input(i, weft::BufferRef::allocate(m.input(i).dtype(), shape));
        }
        m.run();
    }
    // Reading every output's bytes lets AddressSanitizer check that they are all there.
    volatile unsigned char sink = 0;
    for (int o = 0; o < m.num_outputs(); ++o) {
        const weft::BufferRef& out = m.get_output(o);
        const unsigned char* p = static_cast<const unsigned char*>(out.data());
        for (int64_t b = 0; b < out.size_bytes(); ++b) sink = sink ^ p[b];
    }
    (void)sink;
}

}  // namespace weft_fuzz
