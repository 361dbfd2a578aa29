// The paper cell's columns and the report's section about the reference paper's figures.
#include "report/paper_section.h"

#include <fmt/format.h>

namespace gpudays {
namespace {

// A figure of ours; null when our source has no time for the cell.
template <typename Get>
Column<PaperCell> ours(const char* name, Get get, Display display = Display::kHidden) {
  return {name,
          [get](const PaperCell& c) { return c.ours.fits ? Cell{get(c.ours)} : Cell{}; },
          display};
}

Cell range_end(const PaperCell& c, double TimeRange::*end) {
  if (!c.ours.fits || !c.ours.training_days_range) return Cell{};
  return Cell{(*c.ours.training_days_range).*end};
}

std::string ours_text(const PaperCell& c) {
  if (!c.ours.fits) return "n/a: " + c.ours.reason;
  if (!c.ours.training_days_range) return fmt::format("{:.1f}", c.ours.training_days);
  return fmt::format("{:.1f} ({:.1f}-{:.1f})",
                     c.ours.training_days,
                     c.ours.training_days_range->low,
                     c.ours.training_days_range->high);
}

}  // namespace

const std::vector<Column<PaperCell>>& paper_columns() {
  using D = Display;
  using C = PaperCell;
  static const std::vector<Column<C>> kColumns = {
      {"name", [](const C& c) { return Cell{c.name}; }},
      {"kind", [](const C& c) { return Cell{to_string(c.kind)}; }, D::kPlain},
      {"model", [](const C& c) { return Cell{c.model}; }, D::kPlain},
      {"gpu", [](const C& c) { return Cell{c.gpu}; }, D::kPlain},
      {"gpu_count", [](const C& c) { return Cell{c.layout.world_size()}; }, D::kPlain},
      {"num_nodes", [](const C& c) { return Cell{c.layout.num_nodes}; }},
      {"paper_days", [](const C& c) { return Cell{c.published_days}; }, D::kPlain},
      {"paper_settings", [](const C& c) { return Cell{c.published_settings}; }},
      {"model_flops_per_token", [](const C& c) { return Cell{c.implied.model_flops_per_token}; }},
      {"run_flops", [](const C& c) { return Cell{c.implied.run_flops}; }},
      {"peak_flops_per_gpu", [](const C& c) { return Cell{c.implied.peak_flops_per_gpu}; }},
      {"implied_mfu", [](const C& c) { return Cell{c.implied.mfu}; }, D::kPercent},
      {"matmul_ceiling", [](const C& c) { return Cell{c.implied.matmul_ceiling}; }, D::kPercent},
      {"possible", [](const C& c) { return Cell{!c.implied.impossible}; }, D::kPlain},
      ours(
          "ours_days", [](const TrainingTime& t) { return t.training_days; }, D::kFixed1),
      {"ours_days_low", [](const C& c) { return range_end(c, &TimeRange::low); }},
      {"ours_days_high", [](const C& c) { return range_end(c, &TimeRange::high); }},
      ours(
          "ours_mfu", [](const TrainingTime& t) { return t.mfu; }, D::kPercent),
      ours("ours_settings", [](const TrainingTime& t) { return t.settings; }),
      {"ours_source", [](const C& c) { return Cell{c.ours.provenance}; }},
      {"ours_reason", [](const C& c) { return c.ours.fits ? Cell{} : Cell{c.ours.reason}; }},
      {"verdict", [](const C& c) { return Cell{c.verdict}; }},
      {"citation", [](const C& c) { return Cell{c.citation}; }},
  };
  return kColumns;
}

void add_paper_section(Document& doc, const std::vector<PaperCell>& cells) {
  doc.add(DocHeading{2, "The paper's numbers beside ours", "paper"});
  if (cells.empty()) {
    doc.add(DocParagraph{"No published cells of the reference paper in the catalog."});
    return;
  }
  DocTable table;
  table.name = "paper_numbers";
  table.headers = {"cell",
                   "hardware",
                   "paper days",
                   "paper settings",
                   "implied MFU",
                   "matmul ceiling",
                   "gpudays days",
                   "gpudays MFU",
                   "verdict"};
  for (const PaperCell& c : cells) {
    table.rows.push_back({fmt::format("{} ({})", c.model, to_string(c.kind)),
                          fmt::format("{} x {}", c.layout.world_size(), c.gpu),
                          fmt::format("{:g}", c.published_days),
                          c.published_settings.empty() ? "-" : c.published_settings,
                          fmt::format("{:.1f}%", 100.0 * c.implied.mfu),
                          fmt::format("{:.1f}%", 100.0 * c.implied.matmul_ceiling),
                          ours_text(c),
                          c.ours.fits ? fmt::format("{:.1f}%", 100.0 * c.ours.mfu) : "-",
                          c.implied.impossible ? "impossible" : "possible"});
  }
  table.caption =
      "Implied MFU = the planner's model FLOPs of the whole recipe / (published days x 86,400 s x "
      "GPUs x the GPU's dense peak of the recipe's dtype). A cell above the GPU's matmul ceiling "
      "cannot be right. gpudays days: " +
      cells.front().ours.provenance + ", with the planner's error range.";
  doc.add(std::move(table));
  DocList notes;
  for (const PaperCell& c : cells) {
    std::string item = fmt::format("{}: {}", c.name, c.citation);
    if (c.implied.impossible) item += ". " + c.verdict;
    notes.items.push_back(std::move(item));
  }
  doc.add(std::move(notes));
}

}  // namespace gpudays
