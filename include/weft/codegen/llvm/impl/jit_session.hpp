// The process's one ORC LLJIT, created on first use (thread-safely) and never destroyed:
// kernels may be released from static destructors in any order, so the JIT must outlive
// them all.
//
// Every kernel gets a unique symbol (its name plus a counter), so kernels with the same
// name coexist in the main JITDylib, and its own ResourceTracker, which frees its machine
// code when the KernelModule goes away. The runtime functions of ir/abi.hpp are defined by
// address (no -rdynamic needed); libm comes from the process, libmvec is loaded for the
// vector math calls.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/Error.h>

#include "weft/codegen/llvm/impl/target_machine.hpp"
#include "weft/ir/abi.hpp"

namespace weft::codegen::detail {

// An llvm::Error as text (consuming it).
inline std::string message_of(llvm::Error e) { return llvm::toString(std::move(e)); }

class JitSession {
public:
    static JitSession& get() {
        static JitSession* session = new JitSession();  // deliberately leaked, see above
        return *session;
    }

    std::string unique_symbol(const std::string& kernel_name) {
        return kernel_name + ".weft" + std::to_string(next_id_.fetch_add(1));
    }

    struct Loaded {
        WeftKernelFn entry = nullptr;
        llvm::orc::ResourceTrackerSP tracker;
    };

    // Links an optimized module and returns the address of `symbol` in it.
    Loaded add(llvm::orc::ThreadSafeModule module, const std::string& symbol, const std::string& kernel_name) {
        Loaded loaded;
        loaded.tracker = jit_->getMainJITDylib().createResourceTracker();
        if (auto err = jit_->addIRModule(loaded.tracker, std::move(module)))
            ::weft::detail::throw_user_error("the JIT could not add kernel " + kernel_name + ": " + message_of(std::move(err)));
        auto address = jit_->lookup(symbol);  // compiles and links the module now
        if (!address) {
            std::string why = message_of(address.takeError());
            llvm::consumeError(loaded.tracker->remove());
            ::weft::detail::throw_user_error("kernel " + kernel_name + " could not be linked (an extern function missing?): " +
                                     why);
        }
        loaded.entry = address->toPtr<WeftKernelFn>();
        return loaded;
    }

private:
    JitSession() {
        initialize_llvm();
        auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
        WEFT_CHECK(bool(builder), "LLVM does not support this host for JIT compilation: ",
                   message_of(builder.takeError()));
        builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        // Concurrent compilation: kernels are built from any thread, and LLJIT's default
        // compiler shares one TargetMachine between them (found by the concurrency test).
        auto jit = llvm::orc::LLJITBuilder()
                       .setJITTargetMachineBuilder(std::move(*builder))
                       .setSupportConcurrentCompilation(true)
                       .create();
        WEFT_CHECK(bool(jit), "could not create LLVM's ORC JIT: ", message_of(jit.takeError()));
        jit_ = std::move(*jit);
        define_runtime_functions();
        load_vector_math();
    }

    void define_runtime_functions() {
        llvm::orc::SymbolMap symbols;
        auto define = [&](const char* name, auto* function) {
            symbols[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                                    llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
        };
        define("weft_runtime_set_error", &weft_runtime_set_error);
        define("weft_runtime_parallel_for", &weft_runtime_parallel_for);
        define("weft_runtime_alloc", &weft_runtime_alloc);
        define("weft_runtime_free", &weft_runtime_free);
        if (auto err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))))
            WEFT_ICHECK(false, "defining the runtime functions in the JIT: ", message_of(std::move(err)));
    }

    // Without libmvec kernels still compile: the emitter then computes vector math lane by
    // lane (it checks the same library for each variant).
    void load_vector_math() {
        auto generator = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1",
                                                                        jit_->getDataLayout().getGlobalPrefix());
        if (generator) jit_->getMainJITDylib().addGenerator(std::move(*generator));
        else llvm::consumeError(generator.takeError());
    }

    std::unique_ptr<llvm::orc::LLJIT> jit_;
    std::atomic<uint64_t> next_id_{0};
};

}  // namespace weft::codegen::detail
