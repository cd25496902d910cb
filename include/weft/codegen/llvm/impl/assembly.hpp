// The host assembly of a kernel, generated on request from its optimized IR (most users
// never look, so the JIT does not pay for it up front).
#pragma once
#include <string>

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "weft/codegen/llvm/impl/target_machine.hpp"

namespace weft::codegen::detail {

inline std::string assembly_of(const std::string& optimized_ir, const Target& target) {
    llvm::LLVMContext ctx;
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> m = llvm::parseIR(llvm::MemoryBufferRef(optimized_ir, "kernel"), diagnostic, ctx);
    WEFT_ICHECK(m != nullptr, "re-reading a kernel's own IR failed: ", diagnostic.getMessage().str());
    auto tm = make_target_machine(target);
    llvm::SmallString<0> text;
    llvm::raw_svector_ostream os(text);
    llvm::legacy::PassManager passes;
    bool unsupported = tm->addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile);
    WEFT_ICHECK(!unsupported, "LLVM cannot emit assembly for ", target.str());
    passes.run(*m);
    return std::string(text.str());
}

}  // namespace weft::codegen::detail
