// libFuzzer target for the .weft loader: bytes -> graph::load_module_from_memory (the header's
// size and checksum made to fit first, so that the mutations reach the loader's own checks)
// and one run on inputs made of the same bytes. The contract is fuzz_contract.hpp's.
//
// An artifact is executable code (graph/artifact.hpp): its checks catch corruption, not an
// author who rewrites a kernel's object code together with the hash stored beside it. A
// fuzzer can be such an author, in two ways this target closes:
//  - libFuzzer's comparison-guided mutations copy the value an integer is compared with
//    into the input, so they would "repair" an object's hash after changing its code and
//    then link and run that code. -use_cmp=0 turns them off (LLVMFuzzerInitialize adds it
//    before the command line's own flags, which may still say otherwise).
//  - Copying a kernel's whole object record, hash included, onto another kernel passes
//    every check but runs code compiled for one signature with another's tensors. Only
//    modules whose every kernel is a seed kernel (the same object code for the same
//    signature) are run; the others are still loaded.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <weft/graph/artifact.hpp>
#include <weft/runtime/bytes.hpp>

#include "artifact_seeds.hpp"
#include "fuzz_contract.hpp"
#include "weft/graph/impl/loop_kernel.hpp"
#include "weftc/artifact_edit.hpp"

namespace {

using namespace weft;

// A kernel's identity for the trust check: its object code's hash and its signature; for a
// loop's kernel, its bound and carried values and its body's kernels' identities (a body is
// object code too, and a bound the fuzzer raised would only make the run a hang).
std::string kernel_identity(const Kernel& k) {
    const ir::PrimFunc& f = k.signature();
    std::string id = detail::concat(detail::fnv1a64(k.module()->object_code().bytes), " ", f.name, " ", f.fast_math);
    if (const graph::detail::LoopKernelModule* loop = graph::detail::as_loop(k)) {
        const graph::detail::LoopSpec& spec = loop->spec();
        id += detail::concat(" loop ", spec.carried, " ", spec.captured, " ", spec.output, " ", spec.max_iterations, " {");
        for (const Kernel& b : loop->body().compiled_kernels()) id += kernel_identity(b) + ";";
        id += "}";
    }
    for (const ir::KernelArg& a : f.args) {
        id += detail::concat(" ", a.name, ":", a.type.str(), ":", a.is_output);
        for (const ir::Expr& d : a.shape) id += detail::concat(",", d);
        for (int o : a.may_overwrite) id += detail::concat("<", o);
    }
    return id;
}

const std::set<std::string>& seed_kernels() {
    static const std::set<std::string> kernels = [] {
        std::set<std::string> s;
        for (const weft_fuzz::SeedModule& seed : weft_fuzz::artifact_seed_modules())
            for (const Kernel& k : seed.module.compiled_kernels()) s.insert(kernel_identity(k));
        return s;
    }();
    return kernels;
}

bool runs_only_seed_kernels(const graph::Module& m) {
    for (const Kernel& k : m.compiled_kernels())
        if (!seed_kernels().count(kernel_identity(k))) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    static std::vector<char*> args;
    static char no_cmp[] = "-use_cmp=0";
    args.assign(*argv, *argv + *argc);
    args.insert(args.begin() + 1, no_cmp);
    args.push_back(nullptr);
    *argc += 1;
    *argv = args.data();
    seed_kernels();  // compiled once, before the clock of the first input starts
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    if (bytes.size() >= graph::kArtifactHeaderBytes) artifact_edit::fix_checksum(bytes);
    weft_fuzz::works_or_refuses([&] {
        graph::Module m = graph::load_module_from_memory(bytes);
        if (runs_only_seed_kernels(m)) weft_fuzz::run_with_bytes(m, bytes);
    });
    return 0;
}
