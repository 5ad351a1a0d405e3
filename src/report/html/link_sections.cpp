// The page's sections of the kinds that characterise a link or a knob: rig
// ladder, rig sweep (depths, and the rate search), rig ab and rig predict
// (page.hpp, Section).
#include "report/html/page.hpp"

#include "report/text_common.hpp"

namespace rig::report::html {
namespace {

void ladder_section(Context& c, const Typed& t) {
  const LadderResult& l = *as<LadderResult>(t);
  table_head(c.out, {"size", "bytes in + out", "MB/s", "lone p50", "compute", "link", "bound"});
  DataBlock pts{"rungs", {}};
  for (const LadderRung& g : l.rungs) {
    const Opt in = fig(t, g.bytes_in), out = fig(t, g.bytes_out);
    const Opt bytes = in && out ? Opt(*in + *out) : std::nullopt;
    // Version 5 measures each size out-heavy too; the plot and its fit are
    // the in-heavy rungs'.
    const bool out_heavy = g.shape == RungShape::out_heavy;
    table_row(c.out, {g.size + (out_heavy ? " out-heavy" : ""), num(bytes, "B"),
                      num(g.mb_per_s, "MB/s"), num(g.lone_ms.median, "ms"), num(g.compute_ms, "ms"),
                      num(g.link_ms, "ms"), name_of(t, g.bound)});
    if (!out_heavy && bytes) pts.rows.push_back({*bytes, g.mb_per_s.value_or(kNaN)});
  }
  table_end(c.out);
  table_head(c.out, {"fit", "fixed", "bandwidth", "r²", "points"});
  for (const auto& [f, name] : {std::pair{&l.pipelined_fit, "pipelined (time per frame)"},
                                std::pair{&l.lone_fit, "lone frames (link time)"}}) {
    Opt mb;
    if (f->bandwidth_bytes_per_s) mb = *f->bandwidth_bytes_per_s / 1e6;
    table_row(c.out, {name, num(f->fixed_ms, "ms"), num(mb, "MB/s"), num(f->r_squared),
                      count(t, f->points)});
  }
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p = plot_spec("Link ladder: MB/s against frame size, with the fitted link model",
                         "bytes per frame, in + out (B)", "throughput (MB/s, 10^6 B/s)");
  p.setup = "set logscale x\nset yrange [0:*]\n";
  p.plot = "$rungs using 1:2 with points pointtype 7 pointsize 1.2 title 'measured rungs'";
  const auto fixed = l.pipelined_fit.fixed_ms;
  const auto bw = l.pipelined_fit.bandwidth_bytes_per_s;
  if (fixed && bw && *bw > 0) {
    // time_ms = fixed_ms + bytes / bw  ->  MB/s = bytes / time / 1e6
    p.setup += report::line("fit_mbps(x) = x / (%.9g/1000.0 + x/%.9g) / 1e6\n", *fixed, *bw);
    p.setup += "set samples 200\n";
    // A fixed cost within float noise of zero (1 ns) is shown as 0.
    p.plot += ", fit_mbps(x) with lines title " +
              gp_quote("fit: " + num(std::fabs(*fixed) < 1e-6 ? 0.0 : *fixed, "ms") + " fixed + " +
                       num(*bw / 1e6, "MB/s"));
  }
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

// rig sweep --rate (kind "rate"): the probes, and p99 from arrival against
// the offered rate with the bound marked.
void rate_sweep_section(Context& c, const Typed& t) {
  const RateSweepResult& s = *as<RateSweepResult>(t);
  table_head(c.out, {"offered rate", "achieved rate", "p99 from arrival", "p99 interval",
                     "late share", "keeps up", "meets the bound"});
  DataBlock meets{"meets", {}}, fails{"fails", {}}, ci{"ci", {}};
  for (const RateProbe& g : s.search.probes) {
    const auto& iv = g.run.latency_ms.p99_ci;
    const bool interval = iv.lower && iv.upper;
    table_row(c.out, {num(fig(t, g.rate), "/s"), num(fig(t, g.run.achieved_rate), "/s"),
                      // An interval the document does not hold is not "not enough samples".
                      interval || !g.p99_ms || t.absent(iv.lower) ? num(g.p99_ms, "ms")
                                                                  : "not enough samples",
                      interval             ? num(iv.lower, "ms") + " .. " + num(iv.upper, "ms")
                      : t.absent(iv.lower) ? "n/a"
                                           : "not enough samples",
                      share(fig(t, g.run.late_share)), yes_no(t, g.keeps_up), yes_no(t, g.meets)});
    if (!g.p99_ms || !fig(t, g.rate)) continue;
    (g.meets ? meets : fails).rows.push_back({g.rate, *g.p99_ms});
    if (interval) ci.rows.push_back({g.rate, *g.p99_ms, *iv.lower, *iv.upper});
  }
  table_end(c.out);
  const double bound = fig(t, s.effective.latency_bound).value_or(0);
  table_head(c.out, {"figure", "value"});
  table_row(c.out,
            {"latency bound (p99 from arrival)", num(fig(t, s.effective.latency_bound), "ms")});
  table_row(c.out, {"best rate meeting the bound", num(s.search.best_rate, "/s")});
  table_row(c.out, {"first failing rate", num(s.search.first_failing_rate, "/s")});
  table_row(c.out, {"search stopped", name_of(t, s.search.end)});
  table_row(c.out, {"lone frame (median)", num(s.lone.overall_ms.median, "ms")});
  table_end(c.out);
  if (meets.rows.empty() && fails.rows.empty()) return;
  PlotSpec p = plot_spec("Rate search: p99 latency from arrival against the offered rate",
                         "offered rate (frames/s)", "p99 latency from arrival (ms)");
  p.setup = "set logscale x\nset logscale y\nset offsets graph 0.05, graph 0.05, 0, 0\n";
  std::string plot;
  auto add = [&](const std::string& part) { plot += (plot.empty() ? "" : ", ") + part; };
  if (!ci.rows.empty())
    add("$ci using 1:2:3:4 with yerrorbars pointtype 0 linecolor rgb '#7f7f7f' "
        "title 'p99 interval'");
  if (!meets.rows.empty())
    add("$meets using 1:2 with points pointtype 7 pointsize 1.3 linecolor rgb '#2ca02c' "
        "title 'meets the bound'");
  if (!fails.rows.empty())
    add("$fails using 1:2 with points pointtype 5 pointsize 1.3 linecolor rgb '#d62728' "
        "title 'does not'");
  if (bound > 0)
    add(
        report::line("%.9g with lines dashtype 2 linewidth 2 linecolor rgb '#1f77b4' "
                     "title 'bound %.4g ms'",
                     bound, bound));
  p.plot = plot;
  for (auto* b : {&ci, &meets, &fails})
    if (!b->rows.empty()) p.data.push_back(std::move(*b));
  c.out += c.plots.draw(std::move(p));
}

void sweep_section(Context& c, const Typed& t) {
  if (as<RateSweepResult>(t)) return rate_sweep_section(c, t);
  const SweepResult& s = *as<SweepResult>(t);
  table_head(c.out,
             {"depth", "median rate", "min", "max", "fraction of best", "stable", "refined"});
  DataBlock pts{"pts", {}};
  for (const SweepPoint& g : s.points) {
    const Summary& rate = g.result.rate;
    table_row(c.out, {count(t, g.result.depth), num(rate.median, "/s"), num(rate.min, "/s"),
                      num(rate.max, "/s"), share(fig(t, g.fraction_of_best)),
                      yes_no(t, g.result.stable), yes_no(t, g.refined)});
    if (!t.absent(g.result.depth))
      pts.rows.push_back({static_cast<double>(g.result.depth), rate.median.value_or(kNaN),
                          rate.min.value_or(kNaN), rate.max.value_or(kNaN)});
  }
  table_end(c.out);
  const Opt knee = s.knee ? Opt(*s.knee) : std::nullopt;
  const Opt queue = s.queue_depth ? fig(t, s.queue_depth) : std::nullopt;
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"knee", num(knee)});
  table_row(c.out, {"knee against the queue depth", name_of(t, s.knee_vs_queue)});
  table_row(c.out, {"device queue depth", num(queue)});
  table_row(c.out, {"single shot", num(s.single_shot_ms, "ms")});
  table_row(c.out, {"pipelined time per frame", num(s.pipelined_ms, "ms")});
  table_row(c.out, {"round trip hidden by pipelining", num(s.round_trip_ms, "ms")});
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p = plot_spec("Depth sweep: rate against requests in flight",
                         "depth (requests in flight)", "rate (inferences/s)");
  p.setup = "set yrange [0:*]\nset offsets 0.5, 0.5, 0, 0\n";
  p.plot = "$pts using 1:2:3:4 with yerrorlines title 'median rate (bars: min..max)'";
  // A vertical line at x, labelled (the knee, the device's queue depth).
  const auto marker = [&](double x, const char* label, int dashtype, const char* color,
                          double height) {
    p.setup += report::line(
        "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dashtype %d linewidth 2 linecolor "
        "rgb '%s'\nset label '%s %.0f' at %.9g, graph %.2f offset 0.5,0 textcolor rgb "
        "'%s'\n",
        x, x, dashtype, color, label, x, x, height, color);
  };
  if (knee) marker(*knee, "knee", 2, "#d62728", 0.95);
  if (queue) marker(*queue, "queue depth", 3, "#2ca02c", 0.85);
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

// The knobs that differ between the sides: each side's knobs the other
// does not have, and the depth and device when they differ.
std::string knob_difference(const Typed& t, const AbResult& a) {
  std::string out;
  const auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (a.a.spec.given_text() != a.b.spec.given_text())
    add("device " + a.a.spec.given_text() + " vs " + a.b.spec.given_text());
  if (a.depth_a != a.depth_b) add("depth " + count(t, a.depth_a) + " vs " + count(t, a.depth_b));
  const auto only = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::string s;
    for (const auto& k : x)
      if (std::find(y.begin(), y.end(), k) == y.end()) s += (s.empty() ? "" : ", ") + k;
    return s;
  };
  const std::string in_a = only(a.a.knobs, a.b.knobs), in_b = only(a.b.knobs, a.a.knobs);
  if (!in_a.empty() || !in_b.empty())
    add("A " + (in_a.empty() ? std::string("(none)") : in_a) + " vs B " +
        (in_b.empty() ? std::string("(none)") : in_b));
  return out.empty() ? "none: A and B are the same configuration" : out;
}

void ab_section(Context& c, const Typed& t) {
  const AbResult& a = *as<AbResult>(t);
  c.out += "<p class=\"answer\">What differs: " + esc(knob_difference(t, a)) + "</p>\n";
  table_head(c.out, {"pair", "A rate", "B rate", "B / A"});
  DataBlock pts{"pairs", {}};
  for (size_t i = 0; i < a.ratios.size(); ++i) {
    const double ra = i < a.rates_a.size() ? a.rates_a[i] : kNaN;
    const double rb = i < a.rates_b.size() ? a.rates_b[i] : kNaN;
    table_row(c.out, {std::to_string(i + 1), num(ra, "/s"), num(rb, "/s"), num(a.ratios[i])});
    pts.rows.push_back({static_cast<double>(i + 1), a.ratios[i], ra, rb});
  }
  table_end(c.out);
  Opt diff, noise;
  if (a.ratio.median) diff = *a.ratio.median - 1;
  noise = a.ratio.spread;
  table_head(c.out, {"figure", "value"});
  table_row(c.out, {"difference (median B/A - 1)", share(diff)});
  table_row(c.out,
            {"B / A interval", a.test.ratio_lower && a.test.ratio_upper
                                   ? num(a.test.ratio_lower) + " .. " + num(a.test.ratio_upper)
                               : t.absent(a.test.ratio_lower) ? std::string("n/a")
                                                              : std::string("not enough pairs")});
  table_row(c.out, {"p-value", num(fig(t, a.test.p_value))});
  table_row(c.out, {"verdict", name_of(t, a.verdict)});
  table_end(c.out);
  if (pts.rows.empty()) return;
  PlotSpec p = plot_spec("A/B pairs: B / A per pair, with the noise band", "pair", "B / A (ratio)");
  p.y2label = "rate (inferences/s)";
  const double n = noise.value_or(0);
  p.setup =
      "set xtics 1\nset offsets 0.5, 0.5, 0, 0\nset style fill transparent solid 0.15 noborder\n";
  p.plot = report::line(
               "(1-%.9g) with filledcurves y1=%.9g linecolor rgb '#1f77b4' title "
               "'noise band 1 ± %.3g', ",
               n, 1 + n, n) +
           "1 with lines dashtype 2 linecolor rgb '#1f77b4' notitle, "
           "$pairs using 1:2 with linespoints pointtype 7 title 'B / A', "
           "$pairs using 1:3 axes x1y2 with points pointtype 4 title 'A rate', "
           "$pairs using 1:4 axes x1y2 with points pointtype 6 title 'B rate'";
  p.data.push_back(std::move(pts));
  c.out += c.plots.draw(std::move(p));
}

void predict_section(Context& c, const Typed& t) {
  const report::PredictDoc& d = *as<report::PredictDoc>(t);
  const Prediction& p = d.prediction;
  table_head(c.out, {"figure", "measured", "predicted"});
  table_row(c.out, {"rate", num(d.source.measured_rate, "/s"), num(fig(t, p.rate), "/s")});
  table_row(c.out,
            {"lone frame", num(d.source.measured_lone_ms, "ms"), num(fig(t, p.lone_ms), "ms")});
  table_row(c.out, {"bound", "", name_of(t, p.bound)});
  table_row(c.out, {"bus utilization", "", share(fig(t, p.bus_utilization))});
  table_end(c.out);
}

// The link as the text states it: each direction's bandwidth, the duplex
// and the latency of one crossing (the pipelined fit's intercept is float
// noise on a link whose latency pipelining hides, and its slope is neither
// direction's bandwidth on an asymmetric link: neither leads).
std::string ladder_answer(const Typed& t) {
  const LadderResult& l = *as<LadderResult>(t);
  const auto mb = [](const std::optional<double>& b) { return b ? Opt(*b / 1e6) : std::nullopt; };
  std::string out = "the link: ";
  if (l.bw_in_bytes_per_s || l.bw_out_bytes_per_s)
    out += "in " + num(mb(l.bw_in_bytes_per_s), "MB/s") + ", out " +
           num(mb(l.bw_out_bytes_per_s), "MB/s");
  else if (l.bandwidth_bytes_per_s)
    out += num(mb(l.bandwidth_bytes_per_s), "MB/s") + " of in + out bytes (no direction fitted)";
  else
    out += "no bandwidth fitted";
  if (!t.absent(l.duplex) && l.duplex != Duplex::unknown)
    out += "; " + std::string(to_string(l.duplex)) + " duplex (" +
           (l.duplex_from_device ? "the device says so" : "inferred") + ")";
  else
    out += "; duplex unknown";
  if (l.per_transfer_ms)
    out += "; latency " + num(*l.per_transfer_ms, "ms") + " per transfer" +
           (l.round_trip_ms ? " (" + num(*l.round_trip_ms, "ms") + " round trip)" : "");
  else if (l.round_trip_ms)
    out += "; round trip " + num(*l.round_trip_ms, "ms");
  return out;
}

std::string sweep_answer(const Typed& t) {
  if (const auto* r = as<RateSweepResult>(t))
    return "best rate meeting p99 <= " + num(fig(t, r->effective.latency_bound), "ms") + ": " +
           num(r->search.best_rate, "/s");
  const SweepResult& s = *as<SweepResult>(t);
  return "best rate " + num(s.best_rate, "/s") + " at depth " +
         (s.best_depth ? std::to_string(*s.best_depth) : std::string("n/a")) + "; knee at depth " +
         (s.knee ? std::to_string(*s.knee) : std::string("n/a"));
}

std::string ab_answer(const Typed& t) {
  const AbResult& a = *as<AbResult>(t);
  return a.verdict_text.empty() ? name_of(t, a.verdict) : a.verdict_text;
}

std::string predict_answer(const Typed& t) {
  const PredictDoc& d = *as<PredictDoc>(t);
  const Prediction& p = d.prediction;
  return "predicted " + num(fig(t, p.rate), "/s") + " on " + p.link.name + ", bounded by " +
         name_of(t, p.bound) + "; lone frame " + num(fig(t, p.lone_ms), "ms");
}

}  // namespace

const Section kLadderSection{ladder_answer, ladder_section},
    kSweepSection{sweep_answer, sweep_section}, kAbSection{ab_answer, ab_section},
    kPredictSection{predict_answer, predict_section};

}  // namespace rig::report::html
