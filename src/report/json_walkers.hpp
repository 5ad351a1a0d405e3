// The two walkers of a result's table of keys (bench_fields in
// bench_report.cpp). A table is a function template over the walker that
// names each key once: `io.value("depth", r.depth)`. JsonWriter stores each
// field under its key; JsonReader fills each field from its key, and records
// the first problem (a missing key, a wrong type, a number outside the
// field's type) as an Error naming the dotted path. `since` is the schema
// version that added a key: a reader of an older document leaves the field at
// its default when the key is absent. A lenient reader (the page, rig diff,
// rig place's predict results) reads whatever the document holds: an absent
// key or one of the wrong type leaves the field at its default, never an
// error, so a hand-trimmed or older document is shown rather than refused.
// `reading` tells a table which walker it runs under (a key derived on
// write, such as a model's input_bytes, is rebuilt on read), and version()
// the document's schema version (the writer: the current one), for a table
// that upgrades a key an older version named differently. Private to the
// reporters.
#pragma once

#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "report/json_common.hpp"
#include "report/text_common.hpp"
#include "rig/monitor/monitor.hpp"
#include "rig/report/document.hpp"

namespace rig::report {

template <class E>
std::optional<E> enum_from(std::string_view text, std::initializer_list<E> values) {
  for (E v : values)
    if (to_string(v) == text) return v;
  return std::nullopt;
}

constexpr std::initializer_list<ElementType> kElementTypes = {
    ElementType::f32, ElementType::f16, ElementType::f64, ElementType::u8,  ElementType::i8,
    ElementType::u16, ElementType::i16, ElementType::i32, ElementType::i64, ElementType::boolean};
constexpr std::initializer_list<ErrorCode> kErrorCodes = {
    ErrorCode::invalid_argument, ErrorCode::not_found,
    ErrorCode::unsupported,      ErrorCode::io,
    ErrorCode::protocol,         ErrorCode::limit_exceeded,
    ErrorCode::queue_full,       ErrorCode::timeout,
    ErrorCode::disconnected,     ErrorCode::device,
    ErrorCode::permission,       ErrorCode::internal};
constexpr std::initializer_list<Duplex> kDuplexes = {Duplex::half, Duplex::full, Duplex::unknown};
constexpr std::initializer_list<ClockKind> kClocks = {ClockKind::real, ClockKind::virtual_time};
constexpr std::initializer_list<Severity> kSeverities = {Severity::invalidates, Severity::warns};
constexpr std::initializer_list<SourceKind> kSourceKinds = {SourceKind::host, SourceKind::device,
                                                            SourceKind::scripted};
constexpr std::initializer_list<SourceState> kSourceStates = {
    SourceState::available, SourceState::unavailable, SourceState::not_sampled};

// The fields a lenient read did not find in the document (absent, null
// where a plain number or count belongs, or of the wrong type), by address:
// a field left at its struct default is told apart from a figure the
// document holds, so a reader shows it as absent ("n/a"), never as 0. Every
// field under an absent object is absent. Addresses are those of the value
// read into: it must stay in place while this is asked (Typed in the page).
class Absent {
 public:
  void add(const void* field, size_t size) { fields_.emplace(field, size); }
  // A field found after all (an older version's name for it, read second).
  void remove(const void* field, size_t size) { fields_.erase({field, size}); }
  template <class T>
  bool operator()(const T& field) const {
    return fields_.count({static_cast<const void*>(&field), sizeof(T)}) > 0;
  }

 private:
  std::set<std::pair<const void*, size_t>> fields_;
};

class JsonWriter {
 public:
  static constexpr bool reading = false;
  explicit JsonWriter(json& node) : node_(node) {}
  int version() const { return kJsonSchemaVersion; }

  template <class T>
  void value(const char* key, const T& v, int /*since*/ = 1) {
    node_[key] = v;
  }
  // A string that may be absent: null when it is.
  void value(const char* key, const std::optional<std::string>& v, int = 1) {
    node_[key] = v ? json(*v) : json(nullptr);
  }
  void number(const char* key, const std::optional<double>& v, int = 1) {
    node_[key] = json_number(v);
  }
  void number(const char* key, const double& v, int = 1) { node_[key] = json_number(v); }
  // Numbers that may be missing: null for NaN.
  void numbers(const char* key, const std::vector<double>& v, int = 1) {
    json list = json::array();
    for (double x : v) list.push_back(json_number(x));
    node_[key] = std::move(list);
  }
  void ms(const char* key, const Nanos& d) { node_[key] = to_ms(d); }
  void ms(const char* key, const std::optional<Nanos>& d) {
    node_[key] = json_number(optional_ms(d));
  }
  void seconds(const char* key, const Nanos& d) { node_[key] = to_seconds(d); }
  void summary(const char* key, const Summary& s) { node_[key] = json_summary(s); }
  void error(const char* key, const std::optional<Error>& e) { node_[key] = error_json(e); }
  template <class E>
  void enumeration(const char* key, const E& v, std::initializer_list<E>, int = 1) {
    node_[key] = std::string(to_string(v));
  }
  void optional_count(const char* key, const std::optional<uint64_t>& v, int = 1) {
    node_[key] = v ? json(*v) : json(nullptr);
  }
  // A field the document holds that no struct keeps (derived for readers).
  void derived(const char* key, json v) { node_[key] = std::move(v); }
  // An object that may be absent from the result: null when it is.
  template <class T, class F>
  void optional_object(const char* key, const std::optional<T>& v, F&& fields, int = 1) {
    if (!v) {
      node_[key] = nullptr;
      return;
    }
    JsonWriter sub(node_[key] = json::object());
    fields(sub, const_cast<T&>(*v));
  }
  template <class F>
  void object(const char* key, F&& fields, int = 1) {
    JsonWriter sub(node_[key] = json::object());
    fields(sub);
  }
  template <class T, class F>
  void array(const char* key, const std::vector<T>& items, F&& fields, int = 1) {
    json& list = node_[key] = json::array();
    for (const T& item : items) {
      json element = json::object();
      JsonWriter sub(element);
      fields(sub, const_cast<T&>(item));
      list.push_back(std::move(element));
    }
  }
  // An object whose keys are data (a model's weights by type): each value
  // through `fields`.
  template <class T, class F>
  void map(const char* key, const std::map<std::string, T>& items, F&& fields, int = 1) {
    json& object = node_[key] = json::object();
    for (const auto& [k, item] : items) {
      JsonWriter sub(object[k] = json::object());
      fields(sub, const_cast<T&>(item));
    }
  }
  // The environment's facts sit beside its other keys.
  void facts(std::map<std::string, std::string>& facts) {
    for (const auto& [k, v] : facts) node_[k] = v;
  }

 private:
  json& node_;
};

class JsonReader {
 public:
  static constexpr bool reading = true;
  // `expected` ends the message of a missing key: "(expected EXPECTED)".
  JsonReader(const json& node, std::string path, int version, std::string_view what,
             std::optional<Error>& error, bool lenient = false,
             std::string_view expected = "a rig bench --json result")
      : node_(node),
        path_(std::move(path)),
        version_(version),
        what_(what),
        error_(error),
        lenient_(lenient),
        expected_(expected) {}
  int version() const { return version_; }
  // A lenient reader records in `absent` each field the document does not
  // hold (Absent above); the reader's sub-readers share it.
  void track(Absent& absent) { absent_ = &absent; }

  template <class T>
  void value(const char* key, T& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!j->is_boolean()) return bad(key, "is not true or false");
      v = j->get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      whole(key, *j, v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j->is_string()) return bad(key, "is not a string");
      v = j->get<std::string>();
    } else {
      try {
        v = j->get<T>();
      } catch (const json::exception&) {
        bad(key, "has the wrong type");
      }
    }
  }
  void value(const char* key, std::optional<std::string>& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    v.reset();
    if (j->is_string())
      v = j->get<std::string>();
    else if (!j->is_null())
      bad(key, "is not a string or null");
  }
  void number(const char* key, std::optional<double>& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    if (j->is_null()) {
      v.reset();
    } else if (j->is_number()) {
      v = j->get<double>();
    } else {
      bad(key, "is not a number");
    }
  }
  // null reads as NaN: the writer writes a non-finite figure as null.
  void number(const char* key, double& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    if (j->is_null()) {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (j->is_number()) {
      v = j->get<double>();
    } else {
      bad(key, "is not a number");
    }
  }
  void numbers(const char* key, std::vector<double>& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    if (!j->is_array()) return bad(key, "is not an array");
    v.clear();
    for (const json& x : *j)
      v.push_back(x.is_number() ? x.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  void ms(const char* key, Nanos& d) { scaled(key, d, 1e6); }
  void ms(const char* key, std::optional<Nanos>& d) {
    std::optional<double> v;
    number(key, v);
    d.reset();
    if (v) d = to_nanos(key, *v, 1e6);
  }
  void seconds(const char* key, Nanos& d) { scaled(key, d, 1e9); }
  void summary(const char* key, Summary& s) {
    object(key, [&](JsonReader& io) { io.summary_body(s); });
  }
  // The summary this reader's node is.
  void summary_body(Summary& s) {
    JsonReader& io = *this;
    io.value("count", s.count);
    for (auto [k, field] :
         {std::pair{"min", &s.min}, std::pair{"median", &s.median}, std::pair{"mean", &s.mean},
          std::pair{"p90", &s.p90}, std::pair{"p99", &s.p99}, std::pair{"max", &s.max},
          std::pair{"stddev", &s.stddev}, std::pair{"spread", &s.spread},
          std::pair{"mdape", &s.mdape}})
      io.number(k, *field);
    io.number("p95", s.p95, 6);
    io.object(
        "intervals",
        [&](JsonReader& iv) {
          // A structured binding is not captured (clang 14 cannot).
          for (const auto& entry : {std::pair{"p50", &s.median_ci}, std::pair{"p90", &s.p90_ci},
                                    std::pair{"p99", &s.p99_ci}}) {
            PercentileInterval* ci = entry.second;
            iv.object(entry.first, [&](JsonReader& c) {
              c.interval(*ci);
              ci->count = s.count;
            });
          }
          iv.object(
              "p95",
              [&](JsonReader& c) {
                c.interval(s.p95_ci);
                s.p95_ci.count = s.count;
              },
              6);
        },
        3);
  }
  // The node under `key` as it is, for a generic walk (rig diff's
  // environment); nullptr when absent.
  void subtree(const char* key, const json*& out) {
    auto it = node_.find(key);
    out = it == node_.end() ? nullptr : &*it;
  }
  void interval(PercentileInterval& ci) {
    std::optional<double> p, confidence;
    number("p", p);
    number("confidence", confidence);
    ci.p = p.value_or(0);
    ci.confidence = confidence.value_or(0);
    value("needs", ci.needs);
    number("lower", ci.lower);
    number("upper", ci.upper);
    std::optional<uint64_t> lo, hi;
    optional_count("lower_rank", lo);
    optional_count("upper_rank", hi);
    ci.lower_rank = lo ? std::optional<size_t>(*lo) : std::nullopt;
    ci.upper_rank = hi ? std::optional<size_t>(*hi) : std::nullopt;
    enumeration(
        "method", ci.method,
        {IntervalMethod::none, IntervalMethod::order_statistics, IntervalMethod::batch_quantiles},
        7);
    value("batches", ci.batches, 7);
    value("batch_size", ci.batch_size, 7);
    number("lag1", ci.lag1, 7);
    // Before version 7 every stated interval was an order-statistic one.
    if (version_ < 7 && ci.lower && ci.upper) ci.method = IntervalMethod::order_statistics;
  }
  void error(const char* key, std::optional<Error>& e) {
    at(e);
    const json* j = find(key, 1);
    if (!j) return;
    e.reset();
    if (j->is_null()) return;
    Error out;
    std::string code;
    JsonReader io = sub(*j, path_ + key + ".");
    io.value("code", code);
    io.value("message", out.message);
    auto c = enum_from(code, kErrorCodes);
    if (!c) return bad(key, "has an unknown error code '" + code + "'");
    out.code = *c;
    e = out;
  }
  template <class E>
  void enumeration(const char* key, E& v, std::initializer_list<E> values, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    if (!j->is_string()) return bad(key, "is not a string");
    auto e = enum_from(j->get<std::string>(), values);
    if (!e) return bad(key, "has the unknown value '" + j->get<std::string>() + "'");
    v = *e;
  }
  void optional_count(const char* key, std::optional<uint64_t>& v, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    v.reset();
    if (j->is_null()) return;
    uint64_t n = 0;
    whole(key, *j, n);
    v = n;
  }
  void derived(const char*, const json&) {}
  template <class T, class F>
  void optional_object(const char* key, std::optional<T>& v, F&& fields, int since = 1) {
    at(v);
    const json* j = find(key, since);
    if (!j) return;
    v.reset();
    if (j->is_null()) return;
    if (!j->is_object()) return bad(key, "is not an object or null");
    // Read in place: a field's address is what Absent records.
    v.emplace();
    JsonReader io = sub(*j, path_ + key + ".");
    fields(io, *v);
  }
  template <class F>
  void object(const char* key, F&& fields, int since = 1) {
    field_ = {nullptr, 0};
    const json* j = find(key, since);
    if (j && !j->is_object()) bad(key, "is not an object");
    if (j && j->is_object()) {
      JsonReader io = sub(*j, path_ + key + ".");
      fields(io);
    } else if (absent_ && lenient_) {
      // Every field under an absent object is absent: walk them over nothing.
      static const json kNothing = json::object();
      JsonReader io = sub(kNothing, path_ + key + ".");
      fields(io);
    }
  }
  template <class T, class F>
  void array(const char* key, std::vector<T>& items, F&& fields, int since = 1) {
    at(items);
    const json* j = find(key, since);
    if (!j) return;
    if (!j->is_array()) return bad(key, "is not an array");
    // Read in place: a field's address is what Absent records.
    items.clear();
    items.resize(j->size());
    for (size_t i = 0; i < j->size(); ++i) {
      if (error_ || !(*j)[i].is_object()) {
        items.resize(i);
        if (!error_) bad(key, "holds an element that is not an object");
        return;
      }
      JsonReader io = sub((*j)[i], path_ + key + "[" + std::to_string(i) + "].");
      fields(io, items[i]);
    }
  }
  template <class T, class F>
  void map(const char* key, std::map<std::string, T>& items, F&& fields, int since = 1) {
    at(items);
    const json* j = find(key, since);
    if (!j) return;
    if (!j->is_object()) return bad(key, "is not an object");
    items.clear();
    for (const auto& [k, v] : j->items()) {
      if (error_) return;
      if (!v.is_object()) return bad(key, "holds a value that is not an object");
      JsonReader io = sub(v, path_ + key + "." + k + ".");
      fields(io, items[k]);  // in place: a map's elements never move
    }
  }
  void facts(std::map<std::string, std::string>& facts) {
    for (const auto& [k, v] : node_.items())
      if (v.is_string()) facts[k] = v.get<std::string>();
  }

 private:
  // The field the next find() or bad() is about (Absent).
  template <class T>
  void at(const T& field) {
    field_ = {static_cast<const void*>(&field), sizeof(T)};
  }
  void mark_absent() {
    if (absent_ && field_.first) absent_->add(field_.first, field_.second);
  }
  void mark_found() {
    if (absent_ && field_.first) absent_->remove(field_.first, field_.second);
  }
  JsonReader sub(const json& node, std::string path) const {
    JsonReader io(node, std::move(path), version_, what_, error_, lenient_, expected_);
    io.absent_ = absent_;
    return io;
  }
  // The key's node, or nullptr: absent keys are an error unless added after
  // the document's version.
  const json* find(const char* key, int since) {
    if (error_) return nullptr;
    auto it = node_.find(key);
    if (it == node_.end()) {
      mark_absent();
      if (version_ >= since && !lenient_)
        error_ = Error{ErrorCode::invalid_argument, std::string(what_) + ": field '" + path_ + key +
                                                        "' is missing (expected " +
                                                        std::string(expected_) + ")"};
      return nullptr;
    }
    mark_found();
    return &*it;
  }
  void bad(const char* key, const std::string& why) {
    mark_absent();
    if (!error_ && !lenient_)
      error_ = Error{ErrorCode::invalid_argument,
                     std::string(what_) + ": field '" + path_ + key + "' " + why};
  }
  // A whole number in T's range: integers compared as integers; a float only
  // when whole and below 2^digits (2^64 itself would pass `<= max` as a
  // double, and its cast is undefined).
  template <class T>
  void whole(const char* key, const json& j, T& v) {
    using limits = std::numeric_limits<T>;
    bool ok = false;
    if (j.is_number_unsigned()) {
      const auto u = j.get<uint64_t>();
      ok = u <= static_cast<uint64_t>(limits::max());
      if (ok) v = static_cast<T>(u);
    } else if (j.is_number_integer()) {
      const auto i = j.get<int64_t>();
      ok = i >= 0 ? static_cast<uint64_t>(i) <= static_cast<uint64_t>(limits::max())
                  : limits::is_signed && i >= static_cast<int64_t>(limits::min());
      if (ok) v = static_cast<T>(i);
    } else if (j.is_number_float()) {
      const double d = j.get<double>();
      const double limit = std::ldexp(1.0, limits::digits);
      ok = d >= (limits::is_signed ? -limit : 0.0) && d < limit && std::floor(d) == d;
      if (ok) v = static_cast<T>(d);
    }
    if (!ok)
      bad(key, "must be a whole number in " + std::to_string(limits::min()) + ".." +
                   std::to_string(limits::max()) + ", got " +
                   (j.is_number_float() ? line("%.17g", j.get<double>()) : j.dump()));
  }
  std::optional<Nanos> to_nanos(const char* key, double v, double scale) {
    const double ns = v * scale;
    if (!(std::fabs(ns) < 9e18)) {
      bad(key, "is out of range");
      return std::nullopt;
    }
    return Nanos(std::llround(ns));
  }
  void scaled(const char* key, Nanos& d, double scale) {
    at(d);
    const json* j = find(key, 1);
    if (!j) return;
    if (!j->is_number()) return bad(key, "is not a number");
    if (auto n = to_nanos(key, j->get<double>(), scale)) d = *n;
  }

  const json& node_;
  std::string path_;
  int version_;
  std::string_view what_;
  std::optional<Error>& error_;
  bool lenient_ = false;
  std::string_view expected_;
  Absent* absent_ = nullptr;
  std::pair<const void*, size_t> field_{nullptr, 0};
};

// A result's document, serialized: the header naming `tool`, then every key
// of `fields` (a table walked by a JsonWriter).
template <class T, class F>
std::string write_document(std::string_view tool, const T& result, F&& fields) {
  json doc = document(tool);
  T r = result;
  JsonWriter io(doc);
  fields(io, r);
  return dump(doc);
}

// Reads `node` leniently (absent keys and keys of the wrong type keep T's
// defaults) through a table of keys: fields(reader, value).
template <class T, class F>
T read_leniently(const json& node, int version, F&& fields) {
  T value{};
  std::optional<Error> error;
  JsonReader io(node, "", version, "", error, /*lenient=*/true);
  fields(io, value);
  return value;
}

// Reads `node` leniently into `value` in place, recording in `absent` each
// field the document does not hold (a figure to show as absent, not as its
// default).
template <class T, class F>
void read_leniently(const json& node, int version, T& value, Absent& absent, F&& fields) {
  std::optional<Error> error;
  JsonReader io(node, "", version, "", error, /*lenient=*/true);
  io.track(absent);
  fields(io, value);
}

// A walker that lists the keys a table names, in the table's order: the
// columns of a table of such objects (keys_of).
class KeyLister {
 public:
  static constexpr bool reading = false;
  int version() const { return kJsonSchemaVersion; }
  template <class... A>
  void value(const char* key, A&&...) {
    keys.emplace_back(key);
  }
  template <class... A>
  void number(const char* key, A&&...) {
    keys.emplace_back(key);
  }
  template <class... A>
  void numbers(const char* key, A&&...) {
    keys.emplace_back(key);
  }
  template <class... A>
  void ms(const char* key, A&&...) {
    keys.emplace_back(key);
  }
  template <class... A>
  void seconds(const char* key, A&&...) {
    keys.emplace_back(key);
  }
  std::vector<std::string> keys;
};

// The keys of a flat table (window_fields<KeyLister>), in its order.
template <class T, class F>
std::vector<std::string> keys_of(F&& fields) {
  T value{};
  KeyLister io;
  fields(io, value);
  return io.keys;
}

}  // namespace rig::report
