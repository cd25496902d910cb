// Definitions for te/tensor_intrin.hpp: the registry and the operand accessors.
#include <map>
#include <mutex>

#include "weft/ir/printer.hpp"
#include "weft/te/tensor_intrin.hpp"

namespace weft::te {
namespace {

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, TensorIntrin>& registry() {
    static std::map<std::string, TensorIntrin> r;
    return r;
}

// The operand's indices at `index` (relative, trailing dimensions) from its origin; with
// lanes > 1 the last one is a ramp, which may run across compact trailing dimensions.
std::vector<Expr> absolute_index(const TensorIntrinCall::Operand& o, const std::vector<Expr>& index, int lanes,
                                 const std::string& intrin, const char* what) {
    const size_t rank = o.origin.size(), q = o.intrin_shape.size();
    WEFT_CHECK(index.size() == q, "tensor intrinsic '", intrin, "': ", what, " of '", o.tensor.name(), "' takes ", q,
               " indices (the description's rank), got ", index.size());
    WEFT_CHECK(lanes >= 1, "tensor intrinsic '", intrin, "': lanes must be positive");
    std::vector<Expr> idx = o.origin;
    for (size_t d = 0; d < q; ++d) idx[rank - q + d] = idx[rank - q + d] + index[d];
    if (lanes == 1) return idx;
    // Dense across the trailing dimensions: each dimension a vector spills into must have
    // the tensor's full extent equal to the description's.
    int64_t span = 1;
    auto shape = o.tensor.shape();
    for (size_t d = q; d-- > 0;) {
        int64_t e = 0;
        WEFT_CHECK(ir::as_const_int(o.intrin_shape[d], &e), "tensor intrinsic '", intrin, "': symbolic operand shape");
        if (span >= lanes) break;
        if (span > 1) {
            int64_t real = -1;
            ir::as_const_int(shape[rank - q + d + 1], &real);
            int64_t want = 0;
            ir::as_const_int(o.intrin_shape[d + 1], &want);
            WEFT_CHECK(real == want, "tensor intrinsic '", intrin, "': a ", lanes, "-lane ", what, " of '",
                       o.tensor.name(), "' needs its dimension ", rank - q + d + 1, " to be ", want,
                       " (laid out compactly), but it is ", ir::to_string(shape[rank - q + d + 1]));
        }
        span *= e;
    }
    WEFT_CHECK(span >= lanes, "tensor intrinsic '", intrin, "': a ", lanes, "-lane ", what, " of '", o.tensor.name(),
               "' reads past the region (", span, " elements)");
    idx.back() = ir::Ramp::make(idx.back(), make_int(1), lanes);
    return idx;
}

Expr load(const TensorIntrinCall::Operand& o, const std::vector<Expr>& index, int lanes, const std::string& intrin,
          const char* what) {
    auto idx = absolute_index(o, index, lanes, intrin, what);
    DataType t = o.tensor.dtype().with_lanes(lanes);
    return Expr(ir::make_node<ir::ProducerLoad>(t, o.tensor.op().ptr(), o.tensor.value_index(), idx, o.tensor.name()));
}

}  // namespace

Expr TensorIntrinCall::input(int i, const std::vector<Expr>& index, int lanes) const {
    WEFT_CHECK(i >= 0 && i < num_inputs(), "tensor intrinsic '", intrin_name, "': input ", i, " does not exist (it has ",
               num_inputs(), ")");
    return load(inputs[size_t(i)], index, lanes, intrin_name, "read");
}

Expr TensorIntrinCall::output(const std::vector<Expr>& index, int lanes) const {
    return load(out, index, lanes, intrin_name, "read");
}

ir::Stmt TensorIntrinCall::store(const std::vector<Expr>& index, Expr value) const {
    auto idx = absolute_index(out, index, value.type().lanes, intrin_name, "write");
    WEFT_CHECK(value.type().element_of() == out.tensor.dtype(), "tensor intrinsic '", intrin_name, "': stores ",
               value.type().str(), " into '", out.tensor.name(), "' of ", out.tensor.dtype().str());
    return ir::Stmt(ir::make_node<ir::ProducerStore>(out.tensor.op().ptr(), out.tensor.value_index(), std::move(value),
                                                     idx, out.tensor.name()));
}

TensorIntrin decl_tensor_intrin(const Tensor& desc, TensorIntrinLowering lower, std::string name) {
    WEFT_CHECK(!name.empty(), "decl_tensor_intrin: the intrinsic needs a name");
    WEFT_CHECK(desc.defined() && desc.op()->is_compute(), "decl_tensor_intrin '", name,
               "': the description must be a compute (what the intrinsic computes)");
    WEFT_CHECK(lower != nullptr, "decl_tensor_intrin '", name, "': no lowering given");
    auto inputs = desc.op().input_tensors();
    for (auto& t : inputs)
        WEFT_CHECK(t.op()->is_placeholder(), "decl_tensor_intrin '", name, "': the description reads '", t.name(),
                   "', which is computed; an intrinsic's inputs must be placeholders");
    int64_t unused;
    for (auto& e : desc.shape())
        WEFT_CHECK(ir::as_const_int(e, &unused), "decl_tensor_intrin '", name, "': the description's shape must be constant");
    TensorIntrin t(std::make_shared<const TensorIntrinNode>(name, desc, inputs, std::move(lower)));
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry()[name] = t;
    return t;
}

TensorIntrin lookup_tensor_intrin(const std::string& name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it != registry().end()) return it->second;
    std::string known;
    for (auto& [n, _] : registry()) known += (known.empty() ? "" : ", ") + n;
    ::weft::detail::throw_user_error(::weft::detail::concat("no tensor intrinsic named '", name, "' is declared (declared: ",
                                            known.empty() ? "none" : known, ")"));
}

}  // namespace weft::te
