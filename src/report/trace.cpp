#include "rig/report/trace.hpp"

#include <algorithm>
#include <cstdio>

namespace rig {
namespace {

constexpr int kPhaseTid = 1;
constexpr int kWindowTid = 2;
constexpr int kSlotTid = 10;
constexpr const char* kDerivedNames[4] = {"transfer_in", "queue_wait", "compute", "transfer_out"};
constexpr EnginePhase kPhases[] = {
    EnginePhase::load,    EnginePhase::allocate, EnginePhase::first_inference,
    EnginePhase::latency, EnginePhase::warmup,   EnginePhase::measure,
    EnginePhase::drain};

std::string_view phase_name(uint8_t p) {
  return p < std::size(kPhases) ? to_string(kPhases[p]) : std::string_view("?");
}

// Nanoseconds as microseconds, exactly (three decimals).
void append_us(std::string& out, int64_t ns) {
  char buf[40];
  const bool negative = ns < 0;
  const uint64_t v = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "",
                static_cast<unsigned long long>(v / 1000),
                static_cast<unsigned long long>(v % 1000));
  out += buf;
}

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  // Opens one event object with its common fields; the caller appends the
  // rest and calls close().
  void open(std::string_view name, char ph, int pid, int tid, int64_t ts_ns) {
    out_ += first_ ? "\n  {" : ",\n  {";
    first_ = false;
    out_ += "\"name\":\"";
    append_escaped(out_, name);
    out_ += "\",\"ph\":\"";
    out_ += ph;
    out_ += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    append_us(out_, ts_ns);
  }
  void raw(std::string_view s) { out_ += s; }
  void close() { out_ += '}'; }
  void metadata(std::string_view what, int pid, int tid, std::string_view name) {
    out_ += first_ ? "\n  {" : ",\n  {";
    first_ = false;
    out_ += "\"name\":\"";
    out_ += what;
    out_ += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
            ",\"args\":{\"name\":\"";
    append_escaped(out_, name);
    out_ += "\"}}";
  }

 private:
  std::string& out_;
  bool first_ = true;
};

}  // namespace

TraceRecorder::TraceRecorder(TraceSettings settings) : settings_(settings) {
  settings_.max_events = std::max<size_t>(1, settings_.max_events);
}

template <class F>
void TraceRecorder::for_each_record(F&& f) const {
  for (size_t i = 0; i < records_; ++i) f(chunks_[i / kChunk][i % kChunk]);
}

bool TraceRecorder::take(size_t events) {
  if (stopped_) return false;
  if (events_ + events > settings_.max_events) {
    stopped_ = true;
    Record r;
    r.kind = Kind::stop;
    r.begin_ns = last_ns_;
    push(r);
    return false;
  }
  events_ += events;
  return true;
}

void TraceRecorder::push(const Record& r) {
  // A new chunk every kChunk records; records never move once stored.
  if (records_ % kChunk == 0) chunks_.push_back(std::make_unique_for_overwrite<Record[]>(kChunk));
  chunks_.back()[records_ % kChunk] = r;
  ++records_;
}

void TraceRecorder::phase_begin(EnginePhase phase, Nanos at) {
  phase_ = static_cast<uint8_t>(phase);
  if (phase == EnginePhase::warmup) ++run_;
  last_ns_ = at.count();
  if (!take(1)) return;
  Record r;
  r.kind = Kind::phase_begin;
  r.phase = phase_;
  r.slot =
      phase == EnginePhase::warmup || phase == EnginePhase::measure || phase == EnginePhase::drain
          ? run_
          : 0;
  r.begin_ns = at.count();
  push(r);
}

void TraceRecorder::phase_end(EnginePhase phase, Nanos at) {
  last_ns_ = at.count();
  if (!take(1)) return;
  Record r;
  r.kind = Kind::phase_end;
  r.phase = static_cast<uint8_t>(phase);
  r.begin_ns = at.count();
  push(r);
}

void TraceRecorder::window_closed(const WindowFigure& window, Nanos at) {
  last_ns_ = at.count();
  if (!take(2)) return;
  Record r;
  r.kind = Kind::window;
  r.end_ns = at.count();
  r.begin_ns = at.count() - static_cast<int64_t>(window.duration_s * 1e9 + 0.5);
  r.slot = static_cast<uint32_t>(std::min<uint64_t>(window.inferences, UINT32_MAX));
  r.rate = window.rate;
  push(r);
}

void TraceRecorder::submitted(uint32_t slot, Nanos at) {
  if (slot >= submitted_at_.size()) submitted_at_.resize(slot + 1, 0);
  submitted_at_[slot] = at.count();
  last_ns_ = at.count();
}

void TraceRecorder::completed(uint32_t slot, const Completion& c, Nanos at) {
  last_ns_ = at.count();
  const std::optional<Nanos>* parts[4] = {&c.timings.transfer_in, &c.timings.queue_wait,
                                          &c.timings.compute, &c.timings.transfer_out};
  Record r;
  size_t events = 2;
  for (int i = 0; i < 4; ++i)
    if (*parts[i]) {
      r.derived |= static_cast<uint8_t>(1u << i);
      r.durations_ns[i] = (*parts[i])->count();
      ++events;
    }
  if (!take(events)) {
    ++dropped_inferences_;
    return;
  }
  ++inferences_;
  r.kind = Kind::inference;
  r.phase = phase_;
  r.failed = c.error ? 1 : 0;
  r.slot = slot;
  r.begin_ns = slot < submitted_at_.size() ? submitted_at_[slot] : at.count();
  r.end_ns = at.count();
  r.device_end_ns = c.completed_at.count() != 0 ? c.completed_at.count() : at.count();
  push(r);
}

std::string TraceRecorder::to_json() const {
  std::string out;
  out.reserve(records_ * 160 + 1024);
  out += "{\"traceEvents\": [";
  Writer w(out);
  w.metadata("process_name", 1, kPhaseTid, "rig host");
  w.metadata("process_name", 2, kSlotTid, "device (derived from reported durations)");
  w.metadata("thread_name", 1, kPhaseTid, "phases");
  w.metadata("thread_name", 1, kWindowTid, "windows");
  uint32_t slots = 0;
  for_each_record([&](const Record& r) {
    if (r.kind == Kind::inference) slots = std::max(slots, r.slot + 1);
  });
  for (uint32_t k = 0; k < slots; ++k) {
    w.metadata("thread_name", 1, kSlotTid + static_cast<int>(k), "slot " + std::to_string(k));
    w.metadata("thread_name", 2, kSlotTid + static_cast<int>(k), "slot " + std::to_string(k));
  }

  std::vector<uint8_t> open_phases;
  int64_t last = 0;
  for_each_record([&](const Record& r) {
    last = std::max({last, r.begin_ns, r.end_ns});
    switch (r.kind) {
      case Kind::phase_begin:
        w.open(phase_name(r.phase), 'B', 1, kPhaseTid, r.begin_ns);
        w.raw(",\"cat\":\"phase\"");
        if (r.slot) w.raw(",\"args\":{\"run\":" + std::to_string(r.slot) + "}");
        w.close();
        open_phases.push_back(r.phase);
        break;
      case Kind::phase_end:
        w.open(phase_name(r.phase), 'E', 1, kPhaseTid, r.begin_ns);
        w.raw(",\"cat\":\"phase\"");
        w.close();
        if (!open_phases.empty()) open_phases.pop_back();
        break;
      case Kind::window: {
        char buf[96];
        w.open("window", 'X', 1, kWindowTid, r.begin_ns);
        w.raw(",\"cat\":\"window\",\"dur\":");
        append_us(out, r.end_ns - r.begin_ns);
        std::snprintf(buf, sizeof buf, ",\"args\":{\"inferences\":%u,\"rate_per_s\":%.17g}", r.slot,
                      r.rate);
        w.raw(buf);
        w.close();
        w.open("rate_per_s", 'C', 1, kWindowTid, r.end_ns);
        std::snprintf(buf, sizeof buf, ",\"args\":{\"rate_per_s\":%.17g}", r.rate);
        w.raw(buf);
        w.close();
        break;
      }
      case Kind::inference: {
        const int tid = kSlotTid + static_cast<int>(r.slot);
        w.open("inference", 'B', 1, tid, r.begin_ns);
        w.raw(",\"cat\":\"inference\",\"args\":{\"phase\":\"");
        w.raw(phase_name(r.phase));
        w.raw("\"}");
        w.close();
        w.open("inference", 'E', 1, tid, r.end_ns);
        w.raw(",\"cat\":\"inference\"");
        if (r.failed) w.raw(",\"args\":{\"error\":true}");
        w.close();
        // Laid back from the device's completion: out, then compute, wait, in.
        int64_t end = r.device_end_ns;
        for (int i = 3; i >= 0; --i) {
          if (!(r.derived & (1u << i))) continue;
          const int64_t begin = end - r.durations_ns[i];
          w.open(kDerivedNames[i], 'X', 2, tid, begin);
          w.raw(",\"cat\":\"device\",\"dur\":");
          append_us(out, r.durations_ns[i]);
          w.raw(",\"args\":{\"derived\":true}");
          w.close();
          end = begin;
        }
        break;
      }
      case Kind::stop: {
        w.open("trace stopped: the cap of " + std::to_string(settings_.max_events) +
                   " events (--trace-limit) was reached",
               'i', 1, kPhaseTid, r.begin_ns);
        w.raw(",\"s\":\"g\"");
        w.close();
        break;
      }
    }
  });
  // Phases still open when recording stopped end where it stopped.
  while (!open_phases.empty()) {
    w.open(phase_name(open_phases.back()), 'E', 1, kPhaseTid, std::max(last, last_ns_));
    w.raw(",\"cat\":\"phase\",\"args\":{\"truncated\":true}");
    w.close();
    open_phases.pop_back();
  }
  out += "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {";
  out += "\"clock\":\"device clock, microseconds\"";
  out += ",\"max_events\":" + std::to_string(settings_.max_events);
  out += ",\"recorded_events\":" + std::to_string(events_);
  out += ",\"recorded_inferences\":" + std::to_string(inferences_);
  out += ",\"dropped_inferences\":" + std::to_string(dropped_inferences_);
  out += std::string(",\"stopped\":") + (stopped_ ? "true" : "false");
  out += "}\n}\n";
  return out;
}

}  // namespace rig
