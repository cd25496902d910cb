// An LLVM TargetMachine for a weft CPU Target, configured like the JIT's own (PIC, small
// code model, -O3 code generation), so that the optimizer's cost model and the assembly a
// user reads match the code that runs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <mutex>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "weft/ir/error.hpp"
#include "weft/ir/target.hpp"

namespace weft::codegen::detail {

// Turns on one of LLVM's boolean command-line options, unless the process set it already.
inline void default_llvm_flag(const char* name) {
    llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
    auto it = options.find(name);
    if (it != options.end() && it->second->getNumOccurrences() == 0) it->second->addOccurrence(0, name, "true");
}

inline void initialize_llvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        llvm::InitializeNativeTargetAsmParser();
        // Two machine-code passes that cost an eighth of a tiled GEMM's JIT time (-time-passes:
        // loop strength reduction 2.6 ms, the post-RA list scheduler 2.1 ms of 24.6) and bought
        // nothing measurable on weft's kernels: the schedules unroll their micro-kernels, whose
        // addresses are base + constant offsets already, and the post-RA scheduler only runs
        // for some AMD tunings (Intel's never have it). Measured without them: topi SGEMM
        // 1024^3 and the 3x3 conv kernels at the same GFLOP/s, the JIT 3-4 ms shorter.
        // LLVM options are per process: one the host program set itself is left as it is.
        default_llvm_flag("disable-lsr");
        default_llvm_flag("disable-post-ra");
    });
}

// Code for `target` runs in this process: it must be for the host's architecture.
inline void check_runs_on_host(const Target& target) {
    WEFT_CHECK(target.is_cpu(), "the LLVM backend compiles for CPU targets, not for ", target.str(),
               "; use the CUDA backend for GPU targets");
    llvm::Triple wanted(target.triple), host(llvm::sys::getProcessTriple());
    WEFT_CHECK(wanted.getArch() == host.getArch() && wanted.getOS() == host.getOS(), "target triple '", target.triple,
               "' cannot run in this process (the host is '", host.str(),
               "'); the LLVM backend JIT-compiles for the host, e.g. Target::host()");
}

// `level`: the code generator's (None: FastISel and the fast register allocator, for
// ir::PrimFunc::fast_compile kernels).
inline std::unique_ptr<llvm::TargetMachine> make_target_machine(
    const Target& target, llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive) {
    initialize_llvm();
    std::string error;
    const llvm::Target* backend = llvm::TargetRegistry::lookupTarget(target.triple, error);
    WEFT_CHECK(backend != nullptr, "LLVM cannot generate code for the triple '", target.triple, "': ", error);
    llvm::TargetOptions options;
    std::unique_ptr<llvm::TargetMachine> tm(backend->createTargetMachine(
        target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
        level, /*JIT=*/true));
    WEFT_CHECK(tm != nullptr, "LLVM cannot create a target machine for ", target.str());
    return tm;
}

// The calling thread's TargetMachine for `target`, made on first use: creating one (and its
// subtarget tables) for every kernel was a tenth of a small kernel's compile. (A
// TargetMachine may compile one module at a time; each thread has its own.) `fast`: the one
// for fast_compile kernels, apart: an -O0 code generation marks its TargetMachine for
// FastISel for good, which must never reach an optimized kernel.
inline llvm::TargetMachine& thread_target_machine(const Target& target, bool fast = false) {
    thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
    std::unique_ptr<llvm::TargetMachine>& tm =
        machines[target.triple + "|" + target.cpu + "|" + target.features + (fast ? "|fast" : "")];
    if (!tm) tm = make_target_machine(target, fast ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive);
    return *tm;
}

}  // namespace weft::codegen::detail
