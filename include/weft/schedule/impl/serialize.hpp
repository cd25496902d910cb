// Definitions of Schedule::to_json and Schedule::from_json: the trace of primitive calls as
// JSON (nlohmann-json, used only here so public headers stay free of it), and a schedule
// rebuilt by replaying that trace through the real primitives, so every replayed step is
// checked exactly as the original call was.
//
//   {"format": "weft.schedule", "version": 1, "outputs": ["C"],
//    "steps": [{"stage": "C", "primitive": "split", "iter_vars": [0], "ints": [8], "strings": []}, ...]}
//
// iter_vars are positions in the stage's all_iter_vars at the time of the call (for
// compute_at and compute_with: in the other stage's); see record() in schedule/impl/schedule.hpp.
#include <climits>

#include <nlohmann/json.hpp>

#include "weft/schedule/schedule.hpp"

namespace weft {
namespace {

constexpr int kScheduleFormatVersion = 1;
constexpr const char* kScheduleFormat = "weft.schedule";

// How many arguments of each kind a primitive takes (-1: one or more).
struct PrimitiveArity {
    const char* name;
    int iter_vars, ints, strings;
};
constexpr PrimitiveArity kPrimitives[] = {
    {"split", 1, -1, 0},          {"split_nparts", 1, 1, 0}, {"fuse", 2, 0, 0},         {"reorder", -1, 0, 0},
    {"vectorize", 1, 0, 0},      {"unroll", 1, 0, 0},       {"parallel", 1, 0, 0},     {"bind", 1, 0, 1},
    {"pragma", 1, 1, 1},         {"compute_at", 1, 0, 1},   {"compute_with", 1, 0, 1},   {"compute_inline", 0, 0, 0}, {"compute_root", 0, 0, 0},
    {"set_scope", 0, 0, 1},      {"cache_read", 0, 1, -1},  {"cache_write", 0, 0, 1},
    {"rfactor", 1, 1, 0},        {"tensorize", 1, 0, 1},
    {"double_buffer", 0, 0, 0},  {"store_nontemporal", 0, 0, 0}, {"prefetch", 1, -1, 1},
};

const PrimitiveArity* find_primitive(const std::string& name) {
    for (auto& p : kPrimitives)
        if (name == p.name) return &p;
    return nullptr;
}

void check_count(const std::string& where, const char* what, size_t got, int want) {
    if (want < 0)
        WEFT_CHECK(got >= 1, where, ": expected at least one entry in '", what, "', got none");
    else
        WEFT_CHECK(got == size_t(want), where, ": expected ", want, " entries in '", what, "', got ", got);
}

// A field of a JSON object, checked: present and of the expected kind.
const nlohmann::json& field(const nlohmann::json& obj, const char* key, nlohmann::json::value_t kind,
                            const std::string& where) {
    auto it = obj.find(key);
    WEFT_CHECK(it != obj.end(), where, ": missing field '", key, "'");
    bool ok = it->type() == kind ||
              (kind == nlohmann::json::value_t::number_integer && it->is_number_unsigned());
    WEFT_CHECK(ok, where, ": field '", key, "' has the wrong type (", it->type_name(), ")");
    return *it;
}

TraceStep parse_step(const nlohmann::json& j, const std::string& where) {
    using V = nlohmann::json::value_t;
    WEFT_CHECK(j.is_object(), where, ": a step must be a JSON object, got ", j.type_name());
    TraceStep step;
    step.stage = field(j, "stage", V::string, where).get<std::string>();
    step.primitive = field(j, "primitive", V::string, where).get<std::string>();
    for (auto& v : field(j, "iter_vars", V::array, where)) {
        WEFT_CHECK(v.is_number_integer(), where, ": 'iter_vars' must hold integers, got ", v.type_name());
        int64_t pos = v.get<int64_t>();
        WEFT_CHECK(pos >= 0 && pos <= INT32_MAX, where, ": iter var position ", pos, " is out of range");
        step.iter_vars.push_back(int(pos));
    }
    for (auto& v : field(j, "ints", V::array, where)) {
        WEFT_CHECK(v.is_number_integer(), where, ": 'ints' must hold integers, got ", v.type_name());
        step.ints.push_back(v.get<int64_t>());
    }
    for (auto& v : field(j, "strings", V::array, where)) {
        WEFT_CHECK(v.is_string(), where, ": 'strings' must hold strings, got ", v.type_name());
        step.strings.push_back(v.get<std::string>());
    }
    return step;
}

// The one stage called `name` (names identify stages in a record).
Stage stage_named(const Schedule& s, const std::string& name, const std::string& where) {
    Stage found;
    int count = 0;
    for (auto& st : s.stages())
        if (st.name() == name) {
            found = st;
            ++count;
        }
    WEFT_CHECK(count > 0, where, ": the schedule has no stage named '", name,
               "'; was the record made for a different computation?");
    WEFT_CHECK(count == 1, where, ": ", count, " stages are named '", name,
               "', so a record cannot tell them apart; give the tensors distinct names");
    return found;
}

IterVar iter_var_at(const Stage& st, int pos, const std::string& where) {
    const auto& all = st.all_iter_vars();
    WEFT_CHECK(pos >= 0 && size_t(pos) < all.size(), where, ": iter var position ", pos, " is out of range; stage '",
               st.name(), "' has ", all.size(), " iteration variables");
    return all[size_t(pos)];
}

void replay(Schedule& s, const TraceStep& step, const std::string& where) {
    const PrimitiveArity* arity = find_primitive(step.primitive);
    WEFT_CHECK(arity, where, ": unknown primitive '", step.primitive, "'");
    check_count(where, "iter_vars", step.iter_vars.size(), arity->iter_vars);
    check_count(where, "ints", step.ints.size(), arity->ints);
    check_count(where, "strings", step.strings.size(), arity->strings);
    Stage st = stage_named(s, step.stage, where);
    const std::string& p = step.primitive;
    if (p == "compute_at" || p == "compute_with") {
        Stage other = stage_named(s, step.strings[0], where);
        IterVar iv = iter_var_at(other, step.iter_vars[0], where);
        if (p == "compute_at") st.compute_at(other, iv);
        else st.compute_with(other, iv);
        return;
    }
    if (p == "cache_read") {
        int64_t vi = step.ints[0];
        WEFT_CHECK(vi >= 0 && vi < st.op()->num_outputs(), where, ": output ", vi, " of '", st.name(),
                   "' does not exist");
        std::vector<Tensor> readers;
        for (size_t i = 1; i < step.strings.size(); ++i)
            readers.push_back(stage_named(s, step.strings[i], where).op().output(0));
        s.cache_read(st.op().output(int(vi)), step.strings[0], readers);
        return;
    }
    if (p == "cache_write") {
        s.cache_write(st.op().output(0), step.strings[0]);
        return;
    }
    if (p == "compute_inline") return st.compute_inline();
    if (p == "compute_root") return st.compute_root();
    if (p == "set_scope") return st.set_scope(step.strings[0]);
    if (p == "double_buffer") return st.double_buffer();
    if (p == "store_nontemporal") return st.store_nontemporal();
    std::vector<IterVar> ivs;
    for (int pos : step.iter_vars) ivs.push_back(iter_var_at(st, pos, where));
    if (p == "split") {
        WEFT_CHECK(step.ints.size() <= 2 && (step.ints.size() == 1 || (step.ints[1] >= int64_t(TailStrategy::Guard) &&
                                                                       step.ints[1] <= int64_t(TailStrategy::ShiftInwardsOrGuard))),
                   where, ": split takes a factor and an optional tail strategy (0 guard, 1 shift inwards, 2 shift "
                   "inwards or guard)");
        st.split(ivs[0], step.ints[0], step.ints.size() == 2 ? TailStrategy(step.ints[1]) : TailStrategy::Guard);
    }
    else if (p == "split_nparts") st.split_nparts(ivs[0], step.ints[0]);
    else if (p == "fuse") st.fuse(ivs[0], ivs[1]);
    else if (p == "tensorize") st.tensorize(ivs[0], lookup_tensor_intrin(step.strings[0]));
    else if (p == "rfactor") s.rfactor(st.op().output(0), ivs[0], int(step.ints[0]));
    else if (p == "reorder") st.reorder(ivs);
    else if (p == "vectorize") st.vectorize(ivs[0]);
    else if (p == "unroll") st.unroll(ivs[0]);
    else if (p == "parallel") st.parallel(ivs[0]);
    else if (p == "bind") st.bind(ivs[0], ThreadAxis{step.strings[0]});
    else if (p == "pragma") st.pragma(ivs[0], step.strings[0], step.ints[0]);
    else if (p == "prefetch") {
        Operation source = stage_named(s, step.strings[0], where).op();
        const int64_t value = step.ints.size() > 1 ? step.ints[1] : 0;
        WEFT_CHECK(step.ints.size() <= 2 && value >= 0 && value < source->num_outputs(), where,
                   ": prefetch takes an offset and an optional output index of '", step.strings[0], "' (it has ",
                   source->num_outputs(), ")");
        st.prefetch(source.output(int(value)), ivs[0], step.ints[0]);
    }
    else WEFT_ICHECK(false, "primitive '", p, "' is in the table but not replayed");
}

}  // namespace

std::string Schedule::to_json() const {
    nlohmann::json steps = nlohmann::json::array();
    for (auto& t : n_->trace)
        steps.push_back({{"stage", t.stage},
                         {"primitive", t.primitive},
                         {"iter_vars", t.iter_vars},
                         {"ints", t.ints},
                         {"strings", t.strings}});
    nlohmann::json outputs = nlohmann::json::array();
    for (auto& op : n_->outputs) outputs.push_back(op.name());
    nlohmann::json doc = {{"format", kScheduleFormat},
                          {"version", kScheduleFormatVersion},
                          {"outputs", outputs},
                          {"steps", steps}};
    return doc.dump();
}

Schedule Schedule::from_json(const std::string& text, const std::vector<Tensor>& outputs) {
    using V = nlohmann::json::value_t;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    WEFT_CHECK(!doc.is_discarded(), "Schedule::from_json: the text is not valid JSON");
    const std::string where = "Schedule::from_json";
    WEFT_CHECK(doc.is_object(), where, ": expected a JSON object, got ", doc.type_name());
    WEFT_CHECK(field(doc, "format", V::string, where).get<std::string>() == kScheduleFormat, where,
               ": 'format' is not \"", kScheduleFormat, "\"; this is not a weft schedule record");
    int64_t version = field(doc, "version", V::number_integer, where).get<int64_t>();
    WEFT_CHECK(version == kScheduleFormatVersion, where, ": format version ", version,
               " is not supported (this weft reads version ", kScheduleFormatVersion, ")");
    const auto& names = field(doc, "outputs", V::array, where);
    WEFT_CHECK(names.size() == outputs.size(), where, ": the record was made for ", names.size(),
               " output(s), but ", outputs.size(), " were given");
    for (size_t i = 0; i < names.size(); ++i)
        WEFT_CHECK(names[i].is_string() && outputs[i].defined() && names[i].get<std::string>() == outputs[i].op().name(),
                   where, ": output ", i, " of the record is ", names[i].dump(), ", but the tensor given is '",
                   outputs[i].defined() ? outputs[i].op().name() : std::string("<undefined>"), "'");
    const auto& steps = field(doc, "steps", V::array, where);

    Schedule s = create_schedule(outputs);
    for (size_t i = 0; i < steps.size(); ++i) {
        std::string at = detail::concat(where, ": step ", i);
        TraceStep step = parse_step(steps[i], at);
        at = detail::concat(at, " (", step.primitive, " on '", step.stage, "')");
        try {
            replay(s, step, at);
        } catch (const Error& e) {
            // A primitive refused the step: say which step, keep the primitive's reason.
            std::string msg = e.what();
            if (msg.find(at) != std::string::npos) throw;  // our own check already says where
            detail::rethrow_with_context(e, at);
        }
    }
    return s;
}

}  // namespace weft
