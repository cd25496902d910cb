// compile_llvm (codegen/llvm/codegen_llvm.hpp): emit → verify → O2 → object code → JIT link, timed.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCContext.h>
#include <llvm/Support/raw_ostream.h>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/codegen/llvm/impl/assembly.hpp"
#include "weft/codegen/llvm/impl/emit_kernel.hpp"
#include "weft/codegen/llvm/impl/jit_session.hpp"
#include "weft/codegen/llvm/impl/optimize.hpp"

namespace weft::codegen {
namespace detail {

// The optimized LLVM IR of f as text: what compile_llvm links, made again on request
// (llvm_ir() is rarely asked for, and printing every kernel's IR cost a build time).
using IRSource = std::function<std::string()>;

class LLVMKernelModule final : public KernelModule {
public:
    LLVMKernelModule(JitSession::Loaded loaded, std::string symbol, IRSource ir, Target target, double ms)
        : loaded_(std::move(loaded)), symbol_(std::move(symbol)), ir_source_(std::move(ir)), target_(std::move(target)),
          ms_(ms) {}
    ~LLVMKernelModule() override { JitSession::get().release(loaded_); }

    WeftKernelFn entry() const override { return loaded_.entry; }
    WeftKernelFn unchecked_entry() const override { return loaded_.unchecked; }
    std::string llvm_ir() const override {
        std::call_once(ir_once_, [&] {
            if (ir_source_) ir_ = ir_source_();
            ir_bytes_.store(int64_t(ir_.size()));
        });
        return ir_;
    }
    std::string assembly() const override {
        std::call_once(assembly_once_, [&] {
            std::string ir = llvm_ir();
            assembly_ = ir.empty() ? std::string() : assembly_of(ir, target_);
        });
        return assembly_;
    }
    double compile_ms() const override { return ms_; }
    ObjectCode object_code() const override { return {symbol_, loaded_.object}; }
    // The object kept for artifacts, the IR text once made, and the linked code and data
    // (about the object's size again, in pages of their own).
    int64_t memory_bytes() const override {
        const int64_t page = 4096;
        return ir_bytes_.load() + int64_t(loaded_.object.size()) +
               (int64_t(loaded_.object.size()) + 2 * page - 1) / page * page;
    }

private:
    JitSession::Loaded loaded_;
    std::string symbol_;
    IRSource ir_source_;
    Target target_;
    double ms_;
    mutable std::once_flag ir_once_;
    mutable std::string ir_;
    mutable std::atomic<int64_t> ir_bytes_{0};
    mutable std::once_flag assembly_once_;
    mutable std::string assembly_;
};

// f emitted as `symbol` into a new module of ctx, verified and optimized for tm.
inline std::unique_ptr<llvm::Module> optimized_module(const ir::PrimFunc& f, const Target& target,
                                                      const std::string& symbol, llvm::TargetMachine& tm,
                                                      llvm::LLVMContext& ctx) {
    auto m = std::make_unique<llvm::Module>(symbol, ctx);
    m->setTargetTriple(target.triple);
    m->setDataLayout(tm.createDataLayout());
    emit_kernel(f, target, symbol, *m);
    std::string broken;
    llvm::raw_string_ostream why(broken);
    WEFT_ICHECK(!llvm::verifyModule(*m, &why), "the LLVM IR of kernel ", f.name, " is invalid: ", broken);
    optimize_module(*m, tm, f.fast_compile);
    return m;
}

// m's machine code as a relocatable object, what the JIT links (as LLJIT's own compiler
// makes it, but on the calling thread's TargetMachine).
inline std::string object_code_of(llvm::Module& m, llvm::TargetMachine& tm, const std::string& kernel_name) {
    llvm::SmallVector<char, 0> bytes;
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager passes;
    llvm::MCContext* mc = nullptr;
    WEFT_ICHECK(!tm.addPassesToEmitMC(passes, mc, os), "LLVM cannot emit machine code for kernel ", kernel_name);
    passes.run(m);
    return std::string(bytes.data(), bytes.size());
}

// The IR source of a kernel compiled from f as `symbol` (the same passes: the same text).
inline IRSource ir_source_of(const ir::PrimFunc& f, const Target& target, const std::string& symbol) {
    return [f, target, symbol] {
        llvm::LLVMContext ctx;
        std::unique_ptr<llvm::Module> m = optimized_module(f, target, symbol, thread_target_machine(target, f.fast_compile), ctx);
        std::string ir;
        llvm::raw_string_ostream text(ir);
        m->print(text, nullptr);
        return ir;
    };
}

// A module whose IR text is `ir` (empty: none).
inline IRSource ir_text(std::string ir) {
    if (ir.empty()) return {};
    return [ir = std::move(ir)] { return ir; };
}

inline std::atomic<uint64_t> compile_count{0};

}  // namespace detail

uint64_t compile_llvm_count() { return detail::compile_count.load(); }

namespace detail {

// load_llvm_object with the loaded module's IR text made by `ir`.
inline std::shared_ptr<const KernelModule> load_object(const ObjectCode& object, const std::string& kernel_name,
                                                       const Target& target, IRSource ir, double compile_ms) {
    WEFT_CHECK(!object.bytes.empty() && !object.symbol.empty(), "kernel ", kernel_name, ": no object code to load");
    check_runs_on_host(target);
    auto loaded = JitSession::get().add_object(object.bytes, object.symbol, kernel_name);
    return std::make_shared<LLVMKernelModule>(std::move(loaded), object.symbol, std::move(ir), target, compile_ms);
}

}  // namespace detail

std::shared_ptr<const KernelModule> load_llvm_object(const ObjectCode& object, const std::string& kernel_name,
                                                     const Target& target, std::string llvm_ir, double compile_ms) {
    return detail::load_object(object, kernel_name, target, detail::ir_text(std::move(llvm_ir)), compile_ms);
}

std::shared_ptr<const KernelModule> compile_llvm(const ir::PrimFunc& f, const Target& requested) {
    detail::compile_count.fetch_add(1);
    auto start = std::chrono::steady_clock::now();
    // A default-constructed Target names no machine: take it to mean this one.
    const Target target = requested.is_cpu() && requested.triple.empty() ? Target::host() : requested;
    detail::check_runs_on_host(target);
    detail::JitSession& jit = detail::JitSession::get();
    std::string symbol = jit.unique_symbol(f.name);

    llvm::TargetMachine& tm = detail::thread_target_machine(target, f.fast_compile);
    std::string object;
    {
        llvm::LLVMContext ctx;
        std::unique_ptr<llvm::Module> m = detail::optimized_module(f, target, symbol, tm, ctx);
        object = detail::object_code_of(*m, tm, f.name);
    }
    auto loaded = jit.add_object(std::move(object), symbol, f.name, /*apart=*/false);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::make_shared<detail::LLVMKernelModule>(std::move(loaded), symbol, detail::ir_source_of(f, target, symbol),
                                                      target, ms);
}

}  // namespace weft::codegen
