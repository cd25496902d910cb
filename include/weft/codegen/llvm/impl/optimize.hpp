// The optimizer: LLVM's new pass manager, the standard O2 pipeline, tuned for the target
// machine, with glibc's libmvec declared so the loop vectorizer can widen libm calls.
// O2, not O3: weft's schedules already do the loop transformations O3 adds (unrolling,
// vectorization, tiling); on topi's SGEMM O3 only made the IR 25% larger and the JIT
// compile 10% slower, with the same speed (benchmarks/RESULTS.md, jit/compile).
#pragma once
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace weft::codegen::detail {

// `fast_compile` (ir::PrimFunc::fast_compile): LLVM's -O0 pipeline, for the shortest compile
// (benchmarks/RESULTS.md, "compile tiers": O1 took three times as long).
inline void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, bool fast_compile = false) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;

    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    tuning.LoopUnrolling = true;
    llvm::PassBuilder pb(&tm, tuning);

    llvm::Triple triple(m.getTargetTriple());
    llvm::TargetLibraryInfoImpl library(triple);
    if (triple.getArch() == llvm::Triple::x86_64)
        library.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });

    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = fast_compile ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                               : pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    mpm.run(m, mam);
}

}  // namespace weft::codegen::detail
