// The page's sections of the kinds that decide from other results: rig fit,
// rig place and rig diff (page.hpp, Section).
#include <algorithm>
#include <cctype>

#include "report/html/page.hpp"
#include "report/text_common.hpp"

namespace rig::report::html {
namespace {

// rig fit: per precision, whether the weights stay on the device.
std::string fit_answer(const Typed& t) {
  const FitResult& r = *as<FitResult>(t);
  for (const FitRow& x : r.rows)
    if (!t.absent(x.placement) && x.placement == Placement::resident)
      return count(t, x.bits) + "-bit weights (" + num(fig(t, x.weight_bytes), "B") +
             ") stay on the device, " + num(fig(t, x.spare_bytes), "B") + " spare";
  for (const FitRow& x : r.rows)
    if (!t.absent(x.placement) && x.placement == Placement::streamed)
      return "no precision fits: at " + count(t, x.bits) + "-bit " +
             num(fig(t, x.streamed_bytes), "B") + " of weights cross the link per inference" +
             (x.best_rate_per_s ? ", at best " + num(x.best_rate_per_s, "/s") : std::string());
  return r.rows.empty() ? "no precision asked"
                        : "cannot run: the working memory alone exceeds "
                          "the device memory";
}

std::vector<std::string> fit_caveats(const Typed& t) {
  const FitResult& r = *as<FitResult>(t);
  if (t.absent(r.frame_known) || r.frame_known) return {};
  return {
      "the frame crossing per inference is not counted (a raw count, or a symbolic "
      "dimension): every best rate is an upper bound"};
}

void fit_section(Context& c, const Typed& t) {
  const FitResult& r = *as<FitResult>(t);
  const FitSettings& s = r.settings;
  table_head(c.out, {"figure", "value", "note"});
  table_row(c.out, {"device memory", num(fig(t, s.device_memory_bytes), "B"), ""});
  // 12,022,500,000: a count a person reads at a glance.
  const auto grouped = [](std::string digits) {
    for (size_t i = digits.size(); i > 3 && std::isdigit(static_cast<unsigned char>(digits[i - 4]));
         i -= 3)
      digits.insert(i - 3, ",");
    return digits;
  };
  table_row(c.out, {"parameters", grouped(count(t, r.weights.parameters)),
                    grouped(count(t, r.weights.float_parameters)) + " floating point"});
  table_row(c.out, {"stored weights", num(fig(t, r.weights.stored_bytes), "B"),
                    count(t, r.weights.tensors) + " tensors"});
  table_row(c.out, {"working memory",
                    r.working_known ? num(fig(t, r.working_bytes), "B") : std::string("n/a"),
                    r.working_from});
  table_row(c.out, {"link", s.link ? s.link->name : std::string("none given"), s.link_from});
  table_end(c.out);
  table_head(c.out, {"precision", "weights", "need", "placement", "spare", "streamed per inference",
                     "load", "floor per inference", "best rate"});
  for (const FitRow& x : r.rows)
    table_row(c.out, {count(t, x.bits) + "-bit", num(fig(t, x.weight_bytes), "B"),
                      num(fig(t, x.need_bytes), "B"), name_of(t, x.placement),
                      num(fig(t, x.spare_bytes), "B"), num(fig(t, x.streamed_bytes), "B"),
                      num(x.load_ms, "ms"), num(x.floor_ms, "ms"), num(x.best_rate_per_s, "/s")});
  table_end(c.out);
}

// rig place: the choice (or the nearest miss), the ranked assignments and
// the candidates they are built from.
std::string place_answer(const Typed& t) {
  const PlaceResult& r = *as<PlaceResult>(t);
  if (t.absent(r.met)) return r.reason.empty() ? "n/a" : r.reason;
  return (r.met ? "choice: " : "NOT MET: ") + r.reason;
}

// Every candidate's and assignment's caveats, each once.
std::vector<std::string> place_caveats(const Typed& t) {
  const PlaceResult& r = *as<PlaceResult>(t);
  std::vector<std::string> out;
  const auto add = [&](const std::vector<std::string>& items) {
    for (const auto& s : items)
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const auto& c : r.candidates) add(c.caveats);
  for (const auto& a : r.assignments) add(a.caveats);
  return out;
}

void place_section(Context& c, const Typed& t) {
  const PlaceResult& r = *as<PlaceResult>(t);
  c.out += "<p>workload: " + esc(num(fig(t, r.workload.fps))) + " fps" +
           (r.workload.latency_ms ? ", lone latency &lt;= " + esc(num(r.workload.latency_ms, "ms"))
                                  : std::string()) +
           (r.workload.frame_bytes ? ", frame " + esc(r.workload.frame_text) + " = " +
                                         esc(num(r.workload.frame_bytes, "B"))
                                   : std::string()) +
           "</p>\n";
  c.out += "<h3>Assignments, best first</h3>\n";
  table_head(c.out,
             {"#", "meets", "rate", "bound", "lone frame", "transfers", "moved per frame",
              "bus busy", "stages"},
             "wrap");
  for (size_t k = 0; k < r.assignments.size() && k < 10; ++k) {
    const Assignment& a = r.assignments[k];
    std::string stages;
    for (const StagePlacement& p : a.stages) {
      const std::string stage = p.stage < r.stages.size() ? r.stages[p.stage].name : "?";
      const std::string device =
          p.candidate < r.candidates.size() ? r.candidates[p.candidate].device : "?";
      stages += (stages.empty() ? "" : "; ") + stage + " on " + device;
    }
    table_row(
        c.out,
        {std::to_string(k + 1), yes_no(t, a.meets), num(fig(t, a.rate_per_s), "/s"), a.bound,
         num(fig(t, a.lone_ms), "ms"),
         num(fig(t, a.transfer_ms), "ms") + " (" + share(fig(t, a.transfer_share)) + ")",
         num(fig(t, a.bytes_moved_per_frame), "B"), share(fig(t, a.bus_utilization)), stages});
  }
  table_end(c.out);
  if (r.assignments.size() > 10)
    c.out += "<p>" + std::to_string(r.assignments.size() - 10) +
             " more assignments among the figures below.</p>\n";
  c.out += "<h3>Candidates</h3>\n";
  table_head(c.out,
             {"device", "rate", "compute", "lone frame", "link", "energy per inference", "from"},
             "wrap");
  for (const PlaceCandidate& x : r.candidates)
    table_row(c.out,
              {x.device + (x.predicted ? " (predicted)" : ""), num(fig(t, x.rate_per_s), "/s"),
               num(fig(t, x.compute_ms), "ms"), num(fig(t, x.lone_ms), "ms"),
               x.link ? x.link->name + ": " + num(x.link->bw_in / 1e6, "MB/s") + " in, " +
                            num(x.link->bw_out / 1e6, "MB/s") + " out"
                      : std::string("none (in process, or not costed)"),
               x.energy_j ? num(*x.energy_j, "J") : std::string("n/a"), x.source});
  table_end(c.out);
}

// rig diff: how many figures moved outside the noise, and what differs in
// the environments.
std::string diff_answer(const Typed& t) {
  const DiffResult& r = *as<DiffResult>(t);
  return count(t, r.outside) + " figure" + (r.outside == 1 ? "" : "s") +
         " changed outside the noise (A = " + r.a.label + ", B = " + r.b.label + "); " +
         (r.environment.empty()
              ? "the environments are the same (load average aside)"
              : std::to_string(r.environment.size()) + " environment keys differ");
}

void diff_section(Context& c, const Typed& t) {
  const DiffResult& r = *as<DiffResult>(t);
  size_t unchanged = 0;
  table_head(c.out, {"figure", "A", "B", "change", "noise", "A range", "B range"}, "wrap");
  for (const FigureChange& f : r.figures) {
    if (f.change && *f.change == 0 && f.noise != Noise::outside) {
      ++unchanged;
      continue;
    }
    const auto range = [](const Opt& lo, const Opt& hi) {
      return lo && hi ? num(lo) + " .. " + num(hi) : std::string("n/a");
    };
    table_row(c.out, {f.path, num(f.a), num(f.b), share(f.change),
                      f.noise == Noise::unknown
                          ? std::string("no range: not judged")
                          : std::string(f.noise == Noise::outside ? "OUTSIDE" : "within") + " (" +
                                f.range_kind + ")",
                      range(f.a_low, f.a_high), range(f.b_low, f.b_high)});
  }
  table_end(c.out);
  if (unchanged) c.out += "<p>" + std::to_string(unchanged) + " figures unchanged.</p>\n";
  if (r.environment.empty()) return;
  c.out += "<h3>Environments differ</h3>\n";
  table_head(c.out, {"key", "A", "B"}, "wrap");
  for (const EnvironmentChange& e : r.environment)
    table_row(c.out, {e.key, e.a.value_or("(absent)"), e.b.value_or("(absent)")});
  table_end(c.out);
}

}  // namespace

const Section kFitSection{fit_answer, fit_section, fit_caveats};
const Section kPlaceSection{place_answer, place_section, place_caveats};
const Section kDiffSection{diff_answer, diff_section};

}  // namespace rig::report::html
