// The shared parts of rig report's page (page.hpp).
#include "report/html/page.hpp"

#include <cctype>
#include <functional>

#include "report/schema_fields.hpp"
#include "report/text_common.hpp"

namespace rig::report::html {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in HTML text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

// A string for gnuplot: single-quoted, a quote doubled. gnuplot
// interprets nothing inside single quotes (no backquoted commands, no
// backslash escapes, no macros); a control character (a newline would end the
// command) becomes a space. gnuplot 5.4's scanner misreads a doubled quote
// right after the opening quote or after another doubled quote ('''a',
// 'a''''b'): there a zero-width space goes first, which nobody sees.
std::string gp_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      if (out.back() == '\'') out += "\xE2\x80\x8B";
      out += "''";
    } else {
      out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    }
  }
  return out + "'";
}

std::string gp_script_fault(std::string_view script) {
  size_t line_no = 0;
  bool in_block = false;
  for (size_t start = 0; start < script.size();) {
    const size_t end = std::min(script.find('\n', start), script.size());
    const std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++line_no;
    const auto fault = [&](const char* what) {
      return report::line("line %zu: %s", line_no, what);
    };
    if (in_block) {
      if (line == "EOD") {
        in_block = false;
        continue;
      }
      // Numbers only: a label in a block could read as its end marker.
      for (char c : line)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == ' ' || c == '.' || c == '-' ||
              c == '+' || c == 'e' || c == 'N' || c == 'a'))
          return fault("a data block holds something other than numbers");
      continue;
    }
    if (line.size() > 1 && line[0] == '$' && line.ends_with(" << EOD")) {
      in_block = true;
      continue;
    }
    bool quoted = false;
    for (char c : line) {
      if (c == '\'') {
        quoted = !quoted;  // a doubled quote toggles twice: still inside
        continue;
      }
      if (quoted) continue;
      if (c == '"') return fault("a double-quoted string (gnuplot runs `...` inside one)");
      if (c == '`') return fault("a backquote outside a single-quoted string");
      if (c == '@') return fault("a macro outside a single-quoted string");
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return fault("a control character");
    }
    if (quoted) return fault("a string that does not end on its line");
  }
  return in_block ? "a data block without its end marker" : "";
}

std::string num(Opt v, const char* unit) {
  if (!v || !std::isfinite(*v)) return "n/a";
  const std::string_view u(unit);
  // Bytes scaled (a negative count, a shortfall, with its sign); a time of
  // ten seconds or more in seconds, and of an hour or more in hours.
  if (u == "B") return (*v < 0 ? "-" : "") + format_bytes(std::fabs(*v));
  if (u == "ms" && std::fabs(*v) >= 3.6e6) return num(*v / 3.6e6, "h");
  if (u == "ms" && std::fabs(*v) >= 1e4) return num(*v / 1e3, "s");
  // No exponent for a large figure: whole units read better than 1.72e+07.
  std::string s = report::line(std::fabs(*v) >= 1e4 ? "%.0f" : "%.4g", *v);
  if (*unit) s += std::string(" ") + unit;
  return s;
}

void table_head(std::string& out, std::initializer_list<std::string_view> columns,
                std::string_view cls) {
  out += cls.empty() ? "<table>\n<thead><tr>"
                     : "<table class=\"" + std::string(cls) + "\">\n<thead><tr>";
  for (auto c : columns) out += "<th>" + esc(c) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
}
void table_row(std::string& out, const std::vector<std::string>& cells) {
  out += "<tr>";
  for (const auto& c : cells) out += "<td>" + esc(c) + "</td>";
  out += "</tr>\n";
}
void table_end(std::string& out) {
  out += "</tbody>\n</table>\n";
}

void list(std::string& out, std::string_view title, const std::vector<std::string>& items) {
  if (items.empty()) return;
  out += "<h3>" + esc(title) + "</h3>\n<ul>";
  for (const auto& s : items) out += "<li>" + esc(s) + "</li>";
  out += "</ul>\n";
}

std::string yes_no(bool v) {
  return v ? "true" : "false";
}

std::string yes_no(const Typed& t, const bool& v) {
  return t.absent(v) ? "n/a" : yes_no(v);
}

std::string ms(const Typed& t, const Nanos& d) {
  return num(fig(t, d), "ms");
}

std::string seconds(const Typed& t, const Nanos& d) {
  const Opt v = fig(t, d);
  return num(v ? Opt(*v / 1e3) : std::nullopt, "s");
}

std::string share(Opt v) {
  return v ? num(*v * 100, "%") : std::string("n/a");
}

// The lone-frame latency distribution as a CDF through its quantiles (the
// document keeps the summary, not every sample).
void latency_cdf(Context& c, std::initializer_list<Series> series, const std::string& title) {
  PlotSpec p = plot_spec(title, "latency (ms)", "fraction of frames at or below");
  std::string plot;
  int n = 0;
  for (const auto& [s, name] : series) {
    if (s->count == 0) continue;
    DataBlock b{"cdf" + std::to_string(n), {}};
    for (auto [v, f] : {std::pair{s->min, 0.0}, std::pair{s->median, 0.5}, std::pair{s->p90, 0.9},
                        std::pair{s->p95, 0.95}, std::pair{s->p99, 0.99}, std::pair{s->max, 1.0}})
      if (v) b.rows.push_back({*v, f});
    if (b.rows.empty()) continue;
    plot += std::string(n ? ", " : "") + "$" + b.name + " using 1:2 with linespoints title " +
            gp_quote(name);
    p.data.push_back(std::move(b));
    ++n;
  }
  if (n == 0) return;
  p.setup = "set yrange [0:1.02]\n";
  p.plot = plot;
  c.out += c.plots.draw(std::move(p));
}

// Rate per window over time, one series per windows array of the document
// (found by a generic walk: any block may hold one); other numeric window
// keys (a monitor's temperature or load) on the second axis.
void window_plot(Context& c, const json& d, int version, const std::string& title) {
  const auto series = report::window_series(d);
  if (series.empty()) return;
  PlotSpec p =
      plot_spec(title, "time since the start of the measured span (s)", "rate (inferences/s)");
  // Other numeric keys of the windows (a monitor's sensors), a few at most.
  static const auto kFixed =
      report::keys_of<WindowFigure>(report::window_fields<report::KeyLister>);
  const auto fixed = [](const std::string& k) {
    return std::find(kFixed.begin(), kFixed.end(), k) != kFixed.end();
  };
  std::vector<std::string> extra;
  for (const auto& s : series)
    for (const auto& w : *s.windows)
      if (w.is_object())
        for (const auto& [k, v] : w.items())
          if (v.is_number() && !fixed(k) && extra.size() < 4 &&
              std::find(extra.begin(), extra.end(), k) == extra.end())
            extra.push_back(k);
  std::sort(extra.begin(), extra.end());
  std::string plot;
  size_t n = 0;
  for (const auto& s : series) {
    DataBlock b{"w" + std::to_string(n), {}};
    for (const auto& w : *s.windows) {
      // A figure the window does not hold is a gap in the plot, never 0.
      WindowFigure f{kNaN, kNaN, 0, kNaN};
      if (w.is_object()) {
        report::Absent absent;
        report::read_leniently(w, version, f, absent, report::window_fields<report::JsonReader>);
        for (double* x : {&f.start_s, &f.duration_s, &f.rate})
          if (absent(*x)) *x = kNaN;
      }
      std::vector<double> row = {f.start_s + (std::isfinite(f.duration_s) ? f.duration_s : 0),
                                 f.rate};
      for (const auto& k : extra) {
        const json* v = nullptr;
        if (w.is_object())
          for (const auto& item : w.items())
            if (item.key() == k) v = &item.value();
        row.push_back(v && v->is_number() ? v->get<double>() : kNaN);
      }
      b.rows.push_back(std::move(row));
    }
    const std::string label =
        series.size() > 1 && s.repeat ? "repeat " + std::to_string(*s.repeat + 1) : s.path;
    plot += std::string(n ? ", " : "") + "$" + b.name + " using 1:2 with linespoints title " +
            gp_quote(label + " rate");
    size_t col = 3;
    for (const auto& k : extra) {
      if (series.size() == 1 || n == 0)
        plot += ", $" + b.name + " using 1:" + std::to_string(col) +
                " axes x1y2 with lines dashtype 2 title " + gp_quote(k);
      ++col;
    }
    p.data.push_back(std::move(b));
    ++n;
  }
  if (!extra.empty()) {
    std::string units;
    for (const auto& k : extra) units += (units.empty() ? "" : ", ") + k;
    p.y2label = units;
  }
  p.plot = plot;
  c.out += c.plots.draw(std::move(p));
}

}  // namespace rig::report::html
