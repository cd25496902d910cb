// Builds small ONNX models for the importer's tests with the ONNX protobuf classes.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/frontend/onnx/onnx.hpp>
#include <weft/weft.hpp>

namespace onnx_test {

namespace pb = ::ONNX_NAMESPACE;

struct Model {
    pb::ModelProto m;
    pb::GraphProto* g;

    explicit Model(int opset = 13) {
        m.set_ir_version(8);
        m.set_producer_name("weft-test");
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g = m.mutable_graph();
        g->set_name("test");
    }
    // A dimension < 0 is symbolic, named `sym` (or unnamed when sym is empty).
    void input(const std::string& name, std::vector<int64_t> dims, int elem = pb::TensorProto::FLOAT,
               const std::string& sym = "N") {
        auto* vi = g->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem);
        auto* shape = tt->mutable_shape();
        for (int64_t d : dims) {
            auto* dim = shape->add_dim();
            if (d >= 0) dim->set_dim_value(d);
            else if (!sym.empty()) dim->set_dim_param(sym);
        }
    }
    void output(const std::string& name, int elem = pb::TensorProto::FLOAT) {
        auto* vi = g->add_output();
        vi->set_name(name);
        vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    }
    pb::NodeProto& node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? outs.at(0) : name);
        for (auto& i : ins) n->add_input(i);
        for (auto& o : outs) n->add_output(o);
        return *n;
    }
    void initializer(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(pb::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (float x : v) t->add_float_data(x);
    }
    void initializer_i64(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(pb::TensorProto::INT64);
        for (int64_t d : dims) t->add_dims(d);
        for (int64_t x : v) t->add_int64_data(x);
    }
    // An 8-bit initializer (elem: TensorProto::INT8 or UINT8) as raw bytes.
    void initializer_8bit(const std::string& name, std::vector<int64_t> dims, int elem, const std::vector<int>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(elem);
        for (int64_t d : dims) t->add_dims(d);
        std::string raw;
        for (int x : v) raw.push_back(char(x));
        t->set_raw_data(raw);
    }
    std::string bytes() const { return m.SerializeAsString(); }
    weft::graph::Graph load(const weft::onnx::LoadOptions& o = {}) const {
        return weft::onnx::load_from_memory(bytes(), o);
    }
};

inline pb::AttributeProto& attr(pb::NodeProto& n, const std::string& name, int type) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(static_cast<pb::AttributeProto::AttributeType>(type));
    return *a;
}
inline void set_int(pb::NodeProto& n, const std::string& name, int64_t v) {
    attr(n, name, pb::AttributeProto::INT).set_i(v);
}
inline void set_float(pb::NodeProto& n, const std::string& name, float v) {
    attr(n, name, pb::AttributeProto::FLOAT).set_f(v);
}
inline void set_string(pb::NodeProto& n, const std::string& name, const std::string& v) {
    attr(n, name, pb::AttributeProto::STRING).set_s(v);
}
inline void set_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto& a = attr(n, name, pb::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
}

}  // namespace onnx_test

namespace onnx_test {

// Sets `inputs` (in the module's input order) and runs m once.
inline void run_on(weft::graph::Module& m, const std::vector<weft::BufferRef>& inputs) {
    for (size_t k = 0; k < inputs.size(); ++k) m.set_input(int(k), inputs[k]);
    m.run();
}

// The elements of host buffer b, whose dtype is T's (std::logic_error otherwise).
template <class T>
std::vector<T> values_of(const weft::BufferRef& b) {
    if (b.dtype() != weft::dtype_of<T>::value) throw std::logic_error("values_of: " + b.dtype().str() + " elements");
    std::vector<T> v(size_t(b.size()));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
    return v;
}

// Builds g and runs it on `inputs` (in the graph's input order); copies of the outputs.
inline std::vector<weft::Buffer<float>> run(const weft::graph::Graph& g, const std::vector<weft::BufferRef>& inputs) {
    weft::graph::Module m = weft::graph::build(g);
    run_on(m, inputs);
    std::vector<weft::Buffer<float>> r;
    for (int k = 0; k < m.num_outputs(); ++k) r.push_back(weft::Buffer<float>(m.get_output(k)).copy());
    return r;
}

// The message of the weft::Error f throws ("" if none).
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const weft::Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace onnx_test
