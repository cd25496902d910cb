// compile_llvm (codegen/llvm/codegen_llvm.hpp): emit → verify → O2 → JIT, timed.
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/codegen/llvm/impl/assembly.hpp"
#include "weft/codegen/llvm/impl/emit_kernel.hpp"
#include "weft/codegen/llvm/impl/jit_session.hpp"
#include "weft/codegen/llvm/impl/optimize.hpp"

namespace weft::codegen {
namespace detail {

class LLVMKernelModule final : public KernelModule {
public:
    LLVMKernelModule(JitSession::Loaded loaded, std::string symbol, std::string ir, Target target, double ms)
        : loaded_(std::move(loaded)), symbol_(std::move(symbol)), ir_(std::move(ir)), target_(std::move(target)), ms_(ms) {}
    ~LLVMKernelModule() override { JitSession::get().release(loaded_); }

    WeftKernelFn entry() const override { return loaded_.entry; }
    WeftKernelFn unchecked_entry() const override { return loaded_.unchecked; }
    std::string llvm_ir() const override { return ir_; }
    std::string assembly() const override {
        std::call_once(assembly_once_, [&] { assembly_ = ir_.empty() ? std::string() : assembly_of(ir_, target_); });
        return assembly_;
    }
    double compile_ms() const override { return ms_; }
    ObjectCode object_code() const override { return {symbol_, loaded_.object}; }
    // The object kept for artifacts, the IR text, and the linked code and data (about the
    // object's size again, in pages of their own).
    int64_t memory_bytes() const override {
        const int64_t page = 4096;
        return int64_t(ir_.size()) + int64_t(loaded_.object.size()) +
               (int64_t(loaded_.object.size()) + 2 * page - 1) / page * page;
    }

private:
    JitSession::Loaded loaded_;
    std::string symbol_;
    std::string ir_;
    Target target_;
    double ms_;
    mutable std::once_flag assembly_once_;
    mutable std::string assembly_;
};

inline std::atomic<uint64_t> compile_count{0};

}  // namespace detail

uint64_t compile_llvm_count() { return detail::compile_count.load(); }

std::shared_ptr<const KernelModule> load_llvm_object(const ObjectCode& object, const std::string& kernel_name,
                                                     const Target& target, std::string llvm_ir, double compile_ms) {
    WEFT_CHECK(!object.bytes.empty() && !object.symbol.empty(), "kernel ", kernel_name, ": no object code to load");
    detail::check_runs_on_host(target);
    auto loaded = detail::JitSession::get().add_object(object.bytes, object.symbol, kernel_name);
    return std::make_shared<detail::LLVMKernelModule>(std::move(loaded), object.symbol, std::move(llvm_ir), target,
                                                      compile_ms);
}

std::shared_ptr<const KernelModule> compile_llvm(const ir::PrimFunc& f, const Target& requested) {
    detail::compile_count.fetch_add(1);
    auto start = std::chrono::steady_clock::now();
    // A default-constructed Target names no machine: take it to mean this one.
    const Target target = requested.is_cpu() && requested.triple.empty() ? Target::host() : requested;
    detail::check_runs_on_host(target);
    detail::JitSession& jit = detail::JitSession::get();
    std::string symbol = jit.unique_symbol(f.name);

    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>(symbol, *ctx);
    auto tm = detail::make_target_machine(target);
    m->setTargetTriple(target.triple);
    m->setDataLayout(tm->createDataLayout());
    detail::emit_kernel(f, target, symbol, *m);
    std::string broken;
    llvm::raw_string_ostream why(broken);
    WEFT_ICHECK(!llvm::verifyModule(*m, &why), "the LLVM IR of kernel ", f.name, " is invalid: ", broken);

    detail::optimize_module(*m, *tm);
    std::string ir;
    llvm::raw_string_ostream ir_text(ir);
    m->print(ir_text, nullptr);

    auto loaded = jit.add(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)), symbol, f.name);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::make_shared<detail::LLVMKernelModule>(std::move(loaded), symbol, std::move(ir), target, ms);
}

}  // namespace weft::codegen
