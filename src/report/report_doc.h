// A tiny document model for the report (headings, paragraphs, figures, tables) and its two
// renderings: a self-contained HTML page (inline CSS, images next to it, no network) and a
// Markdown twin with the same content.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace gpudays {

struct DocHeading {
  int level = 2;
  std::string text;
  std::string anchor;  // empty: none
};

struct DocParagraph {
  std::string text;  // plain text; renderers escape it
};

struct DocFigure {
  std::string png;  // file name next to the page
  std::string svg;
  std::string alt;
  std::string caption;
  std::string png_data_uri = {};  // the PNG itself, for a page that stands alone (embed_figures)
};

struct DocTable {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::string caption;
  std::string name = {};  // file stem of its LaTeX twin, NAME.tex (report_latex.h)
};

struct DocList {
  std::vector<std::string> items;
};

// The table of contents: a link to every heading with an anchor (levels 2 and 3), filled in by
// the renderers, so every link has its target.
struct DocToc {};

// A collapsed part of the page: every block between a DocDetailsBegin and its DocDetailsEnd
// (HTML <details>; Markdown keeps the same tags, which GitHub renders).
struct DocDetailsBegin {
  std::string summary;
};
struct DocDetailsEnd {};

using DocBlock = std::variant<DocHeading,
                              DocParagraph,
                              DocFigure,
                              DocTable,
                              DocList,
                              DocToc,
                              DocDetailsBegin,
                              DocDetailsEnd>;

struct Document {
  std::string title;
  std::vector<DocBlock> blocks;
  template <typename Block>
  void add(Block block) {
    blocks.emplace_back(std::move(block));
  }
};

// Reads every figure's PNG from `dir` into its data URI, so the HTML page needs no other file.
void embed_figures(Document& doc, const std::string& dir);
std::string render_html(const Document& doc);
std::string render_markdown(const Document& doc);

}  // namespace gpudays
