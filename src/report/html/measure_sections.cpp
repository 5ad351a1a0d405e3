// The page's sections of the measuring kinds: rig bench, rig loop, rig soak
// and rig profile (page.hpp, Section).
#include "report/html/page.hpp"

#include "report/text_common.hpp"

namespace rig::report::html {
namespace {

void bench_section(Context& c, const Typed& t) {
  const BenchResult& b = *as<BenchResult>(t);
  std::string& out = c.out;
  out += "<h3>Time to first output</h3>\n";
  table_head(out, {"phase", "time", "note"});
  table_row(out, {"total", ms(t, b.ttfo.total), "load + allocate + first"});
  table_row(out, {"load", ms(t, b.ttfo.load),
                  "read " + ms(t, b.ttfo.load_breakdown.read) + ", parse " +
                      ms(t, b.ttfo.load_breakdown.parse) + ", compile " +
                      ms(t, b.ttfo.load_breakdown.compile)});
  table_row(out, {"allocate + bind", ms(t, b.ttfo.allocate), ""});
  const std::optional<Nanos>& compute = b.ttfo.first_timings.compute;
  table_row(out, {"first inference", ms(t, b.ttfo.first_inference),
                  "device compute " + num(fig(t, compute ? to_ms(*compute) : kNaN), "ms")});
  table_end(out);
  out += "<h3>Steady state</h3>\n";
  table_head(out, {"repeat", "rate", "inferences", "elapsed", "stable", "last 3 windows spread",
                   "warm-up"});
  for (size_t i = 0; i < b.steady.repeats.size(); ++i) {
    const SteadyRepeat& rep = b.steady.repeats[i];
    table_row(out, {std::to_string(i + 1), num(fig(t, rep.rate), "/s"), count(t, rep.inferences),
                    seconds(t, rep.elapsed), yes_no(t, rep.stable),
                    share(fig(t, rep.last_windows_spread)), seconds(t, rep.warmup)});
  }
  table_end(out);
  window_plot(c, t.doc->doc, t.doc->version, "Rate per window, every repeat");
  out += "<h3>Lone-frame latency</h3>\n";
  // The interval's confidence is the run's (--confidence), read from the
  // overall series; 95% where the document has none (version 5).
  const double confidence = b.latency.overall_ms.p95_ci.confidence;
  table_head(out,
             {"series", "p50", "p90", "p95",
              "p95 interval (" + format_fixed((confidence > 0 ? confidence : 0.95) * 100, 0) + "%)",
              "p99", "max", "samples"});
  for (const auto& [s, name] : {Series{&b.latency.overall_ms, "overall (client-observed)"},
                                Series{&b.latency.hardware_ms, "device compute"},
                                Series{&b.latency.transfer_in_ms, "transfer in"},
                                Series{&b.latency.transfer_out_ms, "transfer out"}}) {
    // A version-5 document has no p95; an interval needs enough samples, and
    // a percentile without one is not printed as a number.
    const auto pct = [&](const Opt& v, const PercentileInterval& ci) {
      return v && ci.lower && ci.upper ? num(v, "ms")
             : v                       ? std::string("not enough samples")
                                       : std::string("n/a");
    };
    const std::string p95_interval =
        s->p95_ci.lower && s->p95_ci.upper
            ? num(s->p95_ci.lower, "ms") + " .. " + num(s->p95_ci.upper, "ms")
        : s->p95 ? std::string("not enough samples")
                 : std::string("n/a");
    table_row(out, {name, s->median_ci.p > 0 ? pct(s->median, s->median_ci) : num(s->median, "ms"),
                    s->p90_ci.p > 0 ? pct(s->p90, s->p90_ci) : num(s->p90, "ms"),
                    s->p95_ci.p > 0 ? pct(s->p95, s->p95_ci) : num(s->p95, "ms"), p95_interval,
                    s->p99_ci.p > 0 ? pct(s->p99, s->p99_ci) : num(s->p99, "ms"), num(s->max, "ms"),
                    count(t, s->count)});
  }
  table_end(out);
  latency_cdf(c,
              {Series{&b.latency.overall_ms, "overall"},
               Series{&b.latency.hardware_ms, "device-side compute"}},
              "Lone-frame latency CDF (through min, p50, p90, p95, p99, max)");
}

void loop_section(Context& c, const Typed& t) {
  const LoopResult& l = *as<LoopResult>(t);
  const Opt device = fig(t, l.loop.frames_per_second);
  const Opt host = fig(t, l.host_rate);
  table_head(c.out, {"figure", "value", "note"});
  table_row(c.out, {"device loop rate", num(device, "/s"),
                    (l.loop.frames_completed ? std::to_string(*l.loop.frames_completed)
                                             : std::string("n/a")) +
                        " frames in " + seconds(t, l.loop.elapsed) + ", no per-frame transfers"});
  table_row(c.out,
            {"host-observed pipelined rate", num(host, "/s"), "depth " + count(t, l.steady.depth)});
  table_row(c.out, {"transfer cost per frame", num(fig(t, l.transfer_cost_ms), "ms"),
                    "share of the host frame time " + share(fig(t, l.transfer_cost_share))});
  table_end(c.out);
  PlotSpec p;
  if (device && host) {
    p.title = "Device loop rate beside the host-observed rate";
    p.xlabel = "";
    p.ylabel = "rate (frames/s)";
    p.data.push_back({"r", {{0, *device}, {1, *host}}});
    p.setup =
        "set style fill solid 0.6\nset boxwidth 0.5\nset xtics ('device loop' 0, 'host "
        "pipelined' 1)\nset xrange [-0.75:1.75]\nset yrange [0:*]\n";
    p.plot = "$r using 1:2 with boxes notitle";
    c.out += c.plots.draw(std::move(p));
  }
}

// rig profile: the top layers by time with their share (the document keeps
// every layer; the page lists the first ten).
void profile_section(Context& c, const Typed& t) {
  const ProfileResult& r = *as<ProfileResult>(t);
  c.out += "<p>" + esc(r.profiler) + ", " + count(t, r.runs) +
           " runs: " + num(fig(t, r.layers_per_run_ms), "ms") + " per run in the layers, " +
           num(fig(t, r.wall_per_run_ms), "ms") + " elapsed</p>\n";
  table_head(c.out, {"#", "layer", "op", "ms/run", "share"});
  for (size_t i = 0; i < r.layers.size() && i < 10; ++i) {
    const ProfiledLayer& l = r.layers[i];
    table_row(c.out, {std::to_string(i + 1), l.name, l.op_type, num(fig(t, l.per_run_ms), "ms"),
                      share(fig(t, l.share))});
  }
  table_end(c.out);
}

std::string bench_answer(const Typed& t) {
  const BenchResult& b = *as<BenchResult>(t);
  return "steady-state rate " + num(fig(t, b.steady.rate.median), "/s") + " (median of " +
         std::to_string(b.steady.repeats.size()) + " repeats, spread " +
         share(fig(t, b.steady.rate.spread)) + "); time to first output " + ms(t, b.ttfo.total) +
         "; lone frame p50 " + num(b.latency.overall_ms.median, "ms");
}

std::string loop_answer(const Typed& t) {
  const LoopResult& l = *as<LoopResult>(t);
  return "device loop " + num(fig(t, l.loop.frames_per_second), "/s") +
         " beside the host-observed " + num(fig(t, l.host_rate), "/s") + ": transfers cost " +
         num(fig(t, l.transfer_cost_ms), "ms") + " per frame";
}

std::string profile_answer(const Typed& t) {
  const ProfileResult& r = *as<ProfileResult>(t);
  if (r.layers.empty()) return "no layer profiled";
  const ProfiledLayer& l = r.layers.front();
  return "the slowest layer, " + l.name + " (" + l.op_type + "), takes " + share(fig(t, l.share)) +
         " of the layers' time: " + num(fig(t, l.per_run_ms), "ms") + " per run";
}

// rig soak: the short-run rate against the long-run one, and the drift
// between them against the noise; the rate (and temperature) per window.
std::string soak_answer(const Typed& t) {
  const SoakResult& r = *as<SoakResult>(t);
  std::string out = "long-run rate " + num(r.long_run.rate, "/s") + " against the short-run " +
                    num(r.short_run.rate, "/s") + ": drift ";
  if (!r.drift) return out + "n/a (a span without a rate)";
  return out + num(*r.drift * 100, "%") +
         (t.absent(r.drift_exceeds_noise) ? std::string()
          : r.drift_exceeds_noise         ? " beyond the noise"
                                          : " within the noise") +
         " (" + share(r.noise) + ")";
}

void soak_section(Context& c, const Typed& t) {
  const SoakResult& r = *as<SoakResult>(t);
  table_head(c.out, {"figure", "value", "note"});
  table_row(c.out, {"time to first output", ms(t, r.ttfo.total), ""});
  for (const auto& [span, name, which] : {std::tuple{&r.short_run, "short-run rate", "first"},
                                          std::tuple{&r.long_run, "long-run rate", "last"}})
    table_row(c.out, {name, num(span->rate, "/s"),
                      std::string(which) + " " + count(t, span->windows) + " windows, spread " +
                          share(span->spread)});
  table_row(c.out,
            {"drift (long / short - 1)", share(r.drift),
             "noise " + share(r.noise) + ", floor " + share(fig(t, r.effective.drift_floor))});
  table_row(c.out, {"whole-run rate", num(fig(t, r.run.rate), "/s"),
                    count(t, r.run.inferences) + " inferences in " + seconds(t, r.run.elapsed) +
                        ", after a warm-up of " + seconds(t, r.run.warmup)});
  table_row(c.out, {"errors", count(t, r.run.errors),
                    r.run.first_error ? r.run.first_error->message : std::string()});
  table_row(c.out, {"temperature sensor",
                    r.temperature_sensor.empty() ? std::string("none") : r.temperature_sensor, ""});
  table_end(c.out);
  window_plot(c, t.doc->doc, t.doc->version, "Rate per window over time");
}

}  // namespace

const Section kBenchSection{bench_answer, bench_section};
const Section kLoopSection{loop_answer, loop_section};
const Section kSoakSection{soak_answer, soak_section};
const Section kProfileSection{profile_answer, profile_section};

}  // namespace rig::report::html
