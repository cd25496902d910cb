// Definitions of schedule/config.hpp. JSON through nlohmann-json (used only in impl files, so
// public headers stay free of it).
#pragma once
#include <algorithm>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "weft/ir/error.hpp"
#include "weft/schedule/config.hpp"

namespace weft {
namespace config_detail {

inline std::string list_str(const std::vector<int64_t>& values, std::optional<int64_t> marked = std::nullopt) {
    std::ostringstream out;
    out << "{";
    for (size_t i = 0; i < values.size(); ++i)
        out << (i ? ", " : "") << values[i] << (marked && values[i] == *marked ? "*" : "");
    out << "}";
    return out.str();
}

inline void sort_unique(std::vector<int64_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

inline bool contains(const std::vector<int64_t>& v, int64_t x) { return std::binary_search(v.begin(), v.end(), x); }

// The JSON text parsed, or a weft::Error that names `what`.
inline nlohmann::json parse_json(const std::string& text, const char* what) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        ::weft::detail::throw_user_error(::weft::detail::concat(what, ": not JSON: ", e.what()));
    }
}

}  // namespace config_detail

std::string Knob::str() const { return name + " in " + config_detail::list_str(candidates, default_value); }

Config Config::recording(ConfigSpace* space) {
    Config c;
    c.recording_ = space;
    return c;
}

Config Config::recording_into(ConfigSpace* space) const {
    Config c = *this;
    c.recording_ = space;
    return c;
}

int64_t Config::define(const std::string& name, std::vector<int64_t> candidates, int64_t default_value) const {
    WEFT_CHECK(!candidates.empty(), "schedule knob '", name, "': no candidates");
    candidates.push_back(default_value);
    config_detail::sort_unique(candidates);
    if (recording_) recording_->add(Knob{name, candidates, default_value});
    auto it = values_.find(name);
    if (it == values_.end()) return default_value;
    WEFT_CHECK(config_detail::contains(candidates, it->second), "schedule knob '", name, "' is set to ", it->second,
               ", which is not one of its candidates ", config_detail::list_str(candidates),
               " here (a config for another workload or target?)");
    return it->second;
}

bool Config::define_bool(const std::string& name, bool default_value) const {
    return define(name, {0, 1}, default_value ? 1 : 0) != 0;
}

Config& Config::set(const std::string& name, int64_t value) {
    values_[name] = value;
    return *this;
}

std::optional<int64_t> Config::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Config::str() const {
    std::ostringstream out;
    out << "{";
    bool first = true;
    for (const auto& [name, value] : values_) {
        out << (first ? "" : ", ") << name << ": " << value;
        first = false;
    }
    out << "}";
    return out.str();
}

std::string Config::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, value] : values_) j[name] = value;
    return j.dump();
}

Config Config::from_json(const std::string& text) {
    nlohmann::json j = config_detail::parse_json(text, "Config::from_json");
    WEFT_CHECK(j.is_object(), "Config::from_json: expected an object of knob names to integers, got ", j.type_name());
    Config c;
    for (auto it = j.begin(); it != j.end(); ++it) {
        WEFT_CHECK(it.value().is_number_integer(), "Config::from_json: knob '", it.key(),
                   "' must be an integer, got ", it.value().dump());
        c.set(it.key(), it.value().get<int64_t>());
    }
    return c;
}

void ConfigSpace::add(Knob knob) {
    WEFT_CHECK(!knob.name.empty(), "ConfigSpace: a knob needs a name");
    config_detail::sort_unique(knob.candidates);
    WEFT_CHECK(config_detail::contains(knob.candidates, knob.default_value), "ConfigSpace: knob '", knob.name,
               "' has default ", knob.default_value, " outside its candidates ",
               config_detail::list_str(knob.candidates));
    if (const Knob* seen = find(knob.name)) {
        WEFT_CHECK(seen->candidates == knob.candidates && seen->default_value == knob.default_value,
                   "ConfigSpace: knob '", knob.name, "' was asked twice with different choices: ", seen->str(), " and ",
                   knob.str());
        return;
    }
    knobs_.push_back(std::move(knob));
}

const Knob* ConfigSpace::find(const std::string& name) const {
    for (const Knob& k : knobs_)
        if (k.name == name) return &k;
    return nullptr;
}

uint64_t ConfigSpace::size() const {
    uint64_t n = 1;
    for (const Knob& k : knobs_) {
        const uint64_t c = k.candidates.size();
        if (n > std::numeric_limits<uint64_t>::max() / c) return std::numeric_limits<uint64_t>::max();
        n *= c;
    }
    return n;
}

std::vector<uint64_t> ConfigSpace::positions(uint64_t index) const {
    WEFT_CHECK(index < size(), "ConfigSpace: point ", index, " is outside the space's ", size(), " points");
    std::vector<uint64_t> out;
    for (const Knob& k : knobs_) {
        out.push_back(index % k.candidates.size());
        index /= k.candidates.size();
    }
    return out;
}

uint64_t ConfigSpace::index_of_positions(const std::vector<uint64_t>& positions) const {
    WEFT_CHECK(positions.size() == knobs_.size(), "ConfigSpace::index_of_positions: ", positions.size(),
               " positions for ", knobs_.size(), " knobs");
    uint64_t index = 0, stride = 1;
    for (size_t k = 0; k < knobs_.size(); ++k) {
        WEFT_CHECK(positions[k] < knobs_[k].candidates.size(), "ConfigSpace::index_of_positions: knob '",
                   knobs_[k].name, "' has ", knobs_[k].candidates.size(), " candidates, position ", positions[k]);
        index += positions[k] * stride;
        stride *= knobs_[k].candidates.size();
    }
    return index;
}

Config ConfigSpace::at(uint64_t index) const {
    WEFT_CHECK(index < size(), "ConfigSpace::at(", index, "): the space has ", size(), " points");
    const std::vector<uint64_t> p = positions(index);
    Config c;
    for (size_t k = 0; k < knobs_.size(); ++k) c.set(knobs_[k].name, knobs_[k].candidates[size_t(p[k])]);
    return c;
}

uint64_t ConfigSpace::index_of(const Config& config) const {
    for (const auto& [name, value] : config.values())
        WEFT_CHECK(find(name), "ConfigSpace::index_of: the config sets knob '", name, "', which this space lacks");
    std::vector<uint64_t> p;
    for (const Knob& k : knobs_) {
        const int64_t value = config.get(k.name).value_or(k.default_value);
        auto it = std::lower_bound(k.candidates.begin(), k.candidates.end(), value);
        WEFT_CHECK(it != k.candidates.end() && *it == value, "ConfigSpace::index_of: knob '", k.name, "' = ", value,
                   " is not one of ", config_detail::list_str(k.candidates));
        p.push_back(uint64_t(it - k.candidates.begin()));
    }
    return index_of_positions(p);
}

Config ConfigSpace::defaults() const {
    Config c;
    for (const Knob& k : knobs_) c.set(k.name, k.default_value);
    return c;
}

std::string ConfigSpace::str() const {
    std::ostringstream out;
    for (const Knob& k : knobs_) out << k.str() << "\n";
    out << size() << (size() == 1 ? " point" : " points") << "\n";
    return out.str();
}

std::string ConfigSpace::to_json() const {
    nlohmann::json knobs = nlohmann::json::array();
    for (const Knob& k : knobs_)
        knobs.push_back({{"name", k.name}, {"candidates", k.candidates}, {"default", k.default_value}});
    return nlohmann::json{{"format", "weft.config_space"}, {"version", 1}, {"knobs", knobs}}.dump();
}

ConfigSpace ConfigSpace::from_json(const std::string& text) {
    nlohmann::json j = config_detail::parse_json(text, "ConfigSpace::from_json");
    WEFT_CHECK(j.is_object() && j.value("format", "") == "weft.config_space" && j.value("version", 0) == 1 &&
                   j.contains("knobs") && j["knobs"].is_array(),
               "ConfigSpace::from_json: not a weft.config_space of version 1");
    ConfigSpace space;
    for (const auto& k : j["knobs"]) {
        WEFT_CHECK(k.is_object() && k.contains("name") && k["name"].is_string() && k.contains("candidates") &&
                       k["candidates"].is_array() && !k["candidates"].empty() && k.contains("default") &&
                       k["default"].is_number_integer(),
                   "ConfigSpace::from_json: a knob needs a name, candidates and an integer default: ", k.dump());
        Knob knob{k["name"].get<std::string>(), {}, k["default"].get<int64_t>()};
        for (const auto& c : k["candidates"]) {
            WEFT_CHECK(c.is_number_integer(), "ConfigSpace::from_json: knob '", knob.name,
                       "' has a candidate that is not an integer: ", c.dump());
            knob.candidates.push_back(c.get<int64_t>());
        }
        space.add(std::move(knob));
    }
    return space;
}

std::vector<int64_t> knob_divisors(int64_t n, int64_t max_value) {
    std::vector<int64_t> out;
    for (int64_t d = 1; d <= n && d <= max_value; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

std::vector<int64_t> knob_powers_of_two(int64_t lo, int64_t hi) {
    std::vector<int64_t> out;
    for (int64_t v = std::max<int64_t>(1, lo); v <= hi; v *= 2) out.push_back(v);
    return out;
}

std::vector<int64_t> knob_multiples(int64_t step, int64_t hi) {
    std::vector<int64_t> out;
    for (int64_t v = std::max<int64_t>(1, step); v <= hi; v += std::max<int64_t>(1, step)) out.push_back(v);
    return out;
}

}  // namespace weft
