// Definitions of autotune/records.hpp.
#pragma once
#include <algorithm>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "weft/autotune/records.hpp"
#include "weft/ir/error.hpp"
#include "weft/runtime/bytes.hpp"

namespace weft::autotune {

std::string target_key(const Target& target) {
    return target.str() + " -threads=" + std::to_string(target.num_threads);
}

double Record::cost_ms() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    std::vector<double> c = costs_ms;
    std::sort(c.begin(), c.end());
    return c[c.size() / 2];
}

std::string Record::to_json() const {
    nlohmann::json config_json = nlohmann::json::parse(config.to_json());
    return nlohmann::json{{"target", target},     {"workload", workload}, {"config", config_json},
                          {"costs_ms", costs_ms}, {"error", error},       {"timestamp", timestamp},
                          {"version", version}}
        .dump();
}

Record Record::from_json(const std::string& line) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        ::weft::detail::throw_user_error(::weft::detail::concat("tuning record: not JSON: ", e.what()));
    }
    WEFT_CHECK(j.is_object(), "tuning record: expected a JSON object, got ", j.type_name());
    auto need = [&](const char* key, bool ok_type, const char* what) {
        WEFT_CHECK(j.contains(key) && ok_type, "tuning record: '", key, "' must be ", what);
    };
    need("target", j.contains("target") && j["target"].is_string(), "a string");
    need("workload", j.contains("workload") && j["workload"].is_string(), "a string");
    need("config", j.contains("config") && j["config"].is_object(), "an object of knob values");
    need("costs_ms", j.contains("costs_ms") && j["costs_ms"].is_array(), "an array of numbers");
    Record r;
    r.target = j["target"].get<std::string>();
    r.workload = j["workload"].get<std::string>();
    r.config = Config::from_json(j["config"].dump());
    for (const auto& c : j["costs_ms"]) {
        WEFT_CHECK(c.is_number() && c.get<double>() >= 0, "tuning record: 'costs_ms' must hold non-negative numbers, got ",
                   c.dump());
        r.costs_ms.push_back(c.get<double>());
    }
    if (j.contains("error")) {
        WEFT_CHECK(j["error"].is_string(), "tuning record: 'error' must be a string");
        r.error = j["error"].get<std::string>();
    }
    if (j.contains("timestamp")) {
        WEFT_CHECK(j["timestamp"].is_number_integer(), "tuning record: 'timestamp' must be an integer");
        r.timestamp = j["timestamp"].get<int64_t>();
    }
    if (j.contains("version")) {
        WEFT_CHECK(j["version"].is_string(), "tuning record: 'version' must be a string");
        r.version = j["version"].get<std::string>();
    }
    return r;
}

Records Records::load(const std::string& path) {
    // Records files grow with every tuning run; 1 GiB is far above any real one.
    const std::string text = ::weft::detail::read_file_limited(path, int64_t(1) << 30, "tuning records",
                                                               "a records file's size (1 GiB)");
    return parse(text, "tuning records '" + path + "'");
}

Records Records::parse(const std::string& text, const std::string& source) {
    Records out;
    size_t start = 0;
    for (int line_no = 1; start < text.size(); ++line_no) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            out.add(Record::from_json(line));
        } catch (const Error& e) {
            ::weft::detail::rethrow_with_context(e, source + " line " + std::to_string(line_no));
        }
    }
    return out;
}

void Records::append_to_file(const std::string& path, const Record& record) {
    std::ofstream file(path, std::ios::app);
    WEFT_CHECK(file, "tuning records: cannot open '", path, "' to append");
    file << record.to_json() << "\n";
    WEFT_CHECK(file.flush(), "tuning records: cannot write to '", path, "'");
}

void Records::add(Record record) {
    records_.push_back(std::move(record));
    const Record& r = records_.back();
    if (!r.ok()) return;
    auto key = std::make_pair(r.target, r.workload);
    auto it = best_.find(key);
    if (it == best_.end() || r.cost_ms() < records_[it->second].cost_ms()) best_[key] = records_.size() - 1;
}

const Record* Records::best(const std::string& target, const std::string& workload) const {
    auto it = best_.find({target, workload});
    return it == best_.end() ? nullptr : &records_[it->second];
}

std::optional<Config> Records::best_config(const Target& target, const std::string& workload) const {
    const Record* r = best(target_key(target), workload);
    if (!r) return std::nullopt;
    return r->config;
}

Records Records::pick_best() const {
    Records out;
    for (const auto& [key, index] : best_) out.add(records_[index]);
    return out;
}

void Records::save(const std::string& path) const {
    std::ofstream file(path, std::ios::trunc);
    WEFT_CHECK(file, "tuning records: cannot open '", path, "' to write");
    for (const Record& r : records_) file << r.to_json() << "\n";
    WEFT_CHECK(file.flush(), "tuning records: cannot write to '", path, "'");
}

const Records& pretuned_records() {
    static const Records records = Records::parse(
#include "weft/autotune/pretuned/records.inc"
        , "weft's pre-tuned records (include/weft/autotune/pretuned/records.inc)");
    return records;
}

}  // namespace weft::autotune
