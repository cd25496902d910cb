// The process's one ORC LLJIT, created on first use (thread-safely) and never destroyed:
// kernels may be released from static destructors in any order, so the JIT must outlive
// them all.
//
// Every kernel gets a unique symbol (its name plus a counter), so kernels with the same
// name coexist in the main JITDylib, and its own ResourceTracker, which frees its machine
// code when the KernelModule goes away. The runtime functions of ir/abi.hpp are defined by
// address (no -rdynamic needed); libm comes from the process, libmvec is loaded for the
// vector math calls.
//
// Kernels reach the JIT as relocatable object code (compile.hpp compiles them itself, on the
// calling thread), which is kept (KernelModule::object_code(), what graph/artifact.hpp saves);
// an object from elsewhere is linked into a JITDylib of its own that release() removes with
// the kernel.
//
// ORC tells its session, not the caller, why materializing failed (an object whose imports
// resolve nowhere: "Symbols not found: [ ... ]"), by default printing "JIT session error:
// ..." on stderr, and the lookup then fails with a bare "Failed to materialize symbols".
// add_object() puts those reports into the weft::Error they throw instead (so
// weftc's one-line errors stay one line, and say why): SessionErrors below.
#pragma once
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "weft/codegen/llvm/impl/emit_kernel.hpp"
#include "weft/codegen/llvm/impl/target_machine.hpp"
#include "weft/ir/abi.hpp"

namespace weft::codegen::detail {

// An llvm::Error as text (consuming it).
inline std::string message_of(llvm::Error e) { return llvm::toString(std::move(e)); }

// The JIT session's error reports (see the top of this file). ORC makes them on its own
// threads, before the failed lookup returns: a report made while an add_object() is in
// progress is kept, and a call that fails claims those made since it began; reports
// no failed call claims go to stderr once no call is in progress, so none is lost. (Two
// calls failing at once may each carry the other's reason too.)
class SessionErrors {
public:
    // The session's error reporter.
    void report(llvm::Error e) {
        std::string message = message_of(std::move(e));
        std::replace(message.begin(), message.end(), '\n', ' ');  // weftc prints one line
        std::lock_guard<std::mutex> lock(mutex_);
        if (calls_ == 0) return print(message);
        reports_.push_back({std::move(message), false});
    }

    // A call in progress, from construction to destruction.
    class Call {
    public:
        explicit Call(SessionErrors& errors) : errors_(errors) {
            std::lock_guard<std::mutex> lock(errors_.mutex_);
            ++errors_.calls_;
            first_ = errors_.reports_.size();
        }
        ~Call() {
            std::lock_guard<std::mutex> lock(errors_.mutex_);
            if (--errors_.calls_ > 0) return;
            for (auto& [message, claimed] : errors_.reports_)
                if (!claimed) print(message);
            errors_.reports_.clear();
        }
        Call(const Call&) = delete;
        Call& operator=(const Call&) = delete;

        // The call's own error, after what the session reported since the call began (the cause).
        std::string explain(const std::string& error) {
            std::lock_guard<std::mutex> lock(errors_.mutex_);
            std::string reported;
            for (size_t i = first_; i < errors_.reports_.size(); ++i) {
                reported += errors_.reports_[i].first + "; ";
                errors_.reports_[i].second = true;
            }
            return reported + error;
        }

    private:
        SessionErrors& errors_;
        size_t first_ = 0;
    };

private:
    static void print(const std::string& message) { llvm::errs() << "JIT session error: " << message << "\n"; }

    std::mutex mutex_;
    int calls_ = 0;
    std::vector<std::pair<std::string, bool>> reports_;  // the message, and whether a failed call claimed it
};

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
        WeftKernelFn unchecked = nullptr;  // the entry without its argument checks (or entry)
        llvm::orc::ResourceTrackerSP tracker;
        llvm::orc::JITDylib* dylib = nullptr;  // add_object's own JITDylib (add: none)
        std::string object;  // the relocatable object code the entry came from
    };

    // Frees a kernel's machine code and the JITDylib add_object made for it. (Keeping the
    // JITDylib, as before, grew the process by ~70 KB per kernel loaded, for ever: a program
    // that loads artifacts again and again ran out of memory; found by fuzz_artifact.)
    void release(const Loaded& loaded) {
        if (loaded.dylib) llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*loaded.dylib));
        else llvm::consumeError(loaded.tracker->remove());
    }

    // Links a relocatable object and returns the address of `symbol` in it; nothing is
    // compiled. An object compile_llvm made in this process goes into the main JITDylib (its
    // symbols are unique); one from elsewhere (an artifact, the disk cache: made by
    // compile_llvm here or in another process) `apart`, into a JITDylib of its own, so that
    // its symbols never clash with this process's kernels.
    Loaded add_object(std::string bytes, const std::string& symbol, const std::string& kernel_name,
                      bool apart = true) {
        SessionErrors::Call session_errors(errors_);
        Loaded loaded;
        llvm::orc::JITDylib* dylib = &jit_->getMainJITDylib();
        std::string buffer_name = symbol;
        if (apart) {
            buffer_name = "weft.object" + std::to_string(next_id_.fetch_add(1));
            auto own = jit_->createJITDylib(buffer_name);
            if (!own)
                ::weft::detail::throw_user_error("the JIT could not load kernel " + kernel_name + ": " +
                                                 message_of(own.takeError()));
            own->addToLinkOrder(jit_->getMainJITDylib());  // the runtime functions, libmvec
            dylib = loaded.dylib = &*own;
        }
        loaded.tracker = dylib->createResourceTracker();
        auto fail = [&](const std::string& what, llvm::Error err) {
            std::string why = session_errors.explain(message_of(std::move(err)));
            release(loaded);
            ::weft::detail::throw_user_error("the object code of kernel " + kernel_name + " could not be " + what +
                                             " (an extern function missing?): " + why);
        };
        auto buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes, buffer_name);
        if (auto err = jit_->addObjectFile(loaded.tracker, std::move(buffer))) fail("loaded", std::move(err));
        auto address = jit_->lookup(*dylib, symbol);  // links the object now
        if (!address) fail("linked", address.takeError());
        loaded.entry = address->toPtr<WeftKernelFn>();
        loaded.unchecked = unchecked_entry(*dylib, symbol, loaded.entry);
        loaded.object = std::move(bytes);  // (the JIT linked its own copy)
        return loaded;
    }

private:
    // `symbol` + kUncheckedSuffix in `dylib`, or `checked` where the kernel has none (a body
    // without the argument check, or an object from before session 8).
    WeftKernelFn unchecked_entry(llvm::orc::JITDylib& dylib, const std::string& symbol, WeftKernelFn checked) {
        auto address = jit_->lookup(dylib, symbol + kUncheckedSuffix);
        if (!address) {
            llvm::consumeError(address.takeError());
            return checked;
        }
        return address->toPtr<WeftKernelFn>();
    }

    JitSession() {
        initialize_llvm();
        // The host as Target::host() detected it (JITTargetMachineBuilder::detectHost would
        // ask the CPU for its features a second time, in every process that loads a kernel).
        const Target host = Target::host();
        llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(host.triple)};
        builder.setCPU(host.cpu);
        builder.addFeatures(llvm::SubtargetFeatures(host.features).getFeatures());  // (splits "+a,-b")
        builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        // Materialization (compiling, linking) on the thread that asks for a symbol: LLJIT's
        // own choice with concurrent compilation, a thread pool, started a thread per object
        // an artifact links (benchmarks/RESULTS.md, "Start-up from an artifact").
        auto process = llvm::orc::SelfExecutorProcessControl::Create(
            nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>());
        WEFT_CHECK(bool(process), "could not set up LLVM's ORC JIT: ", message_of(process.takeError()));
        // Kernels are linked from any thread (compile.hpp compiles them to objects on each
        // thread's own TargetMachine; LLJIT's IR compiler, which would share one, is unused).
        auto jit = llvm::orc::LLJITBuilder()
                       .setExecutionSession(std::make_unique<llvm::orc::ExecutionSession>(std::move(*process)))
                       .setJITTargetMachineBuilder(std::move(builder))
                       .setSupportConcurrentCompilation(true)
                       .create();
        WEFT_CHECK(bool(jit), "could not create LLVM's ORC JIT: ", message_of(jit.takeError()));
        jit_ = std::move(*jit);
        jit_->getExecutionSession().setErrorReporter([this](llvm::Error e) { errors_.report(std::move(e)); });
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
        define("weft_runtime_request_amx", &weft_runtime_request_amx);
        define("weft_runtime_free", &weft_runtime_free);
        define("weft_runtime_check_arguments", &weft_runtime_check_arguments);
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

    SessionErrors errors_;  // before jit_: its reporter outlives the session's last report
    std::unique_ptr<llvm::orc::LLJIT> jit_;
    std::atomic<uint64_t> next_id_{0};
};

}  // namespace weft::codegen::detail
