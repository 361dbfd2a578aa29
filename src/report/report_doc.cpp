// HTML and Markdown rendering of a Document.
#include "report/report_doc.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace gpudays {
namespace {

std::string html_escape(const std::string& s) {
  std::string out;
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
      default:
        out += c;
    }
  }
  return out;
}

// A table cell: escaped, a line break where the text has one.
std::string html_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("<br>") : html_escape(std::string(1, c));
  return out;
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("|*_`[]<>&").find(c) != std::string_view::npos) out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em "
    "auto;padding:0 1em;color:#222;line-height:1.45}"
    "h1{border-bottom:2px solid #ddd}h2{margin-top:2em;border-bottom:1px solid #eee}"
    "figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}"
    "figcaption{font-size:.9em;color:#555}"
    "table{border-collapse:collapse;font-size:.85em;margin:1em 0}"
    "th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}tr:nth-child(even){background:#fafafa}"
    "caption{caption-side:bottom;font-size:.9em;color:#555;text-align:left;padding-top:.3em}"
    ".toc{background:#f8f8f8;border:1px solid #ddd;padding:.5em 1em;margin:1em 0}"
    ".toc ul{margin:.3em 0}.toc li.toc3{margin-left:1.5em;font-size:.9em}"
    "details{margin:.5em 0;border:1px solid #eee;padding:.3em .6em}"
    "summary{cursor:pointer;font-weight:600}";

std::vector<const DocHeading*> toc_entries(const Document& doc) {
  std::vector<const DocHeading*> out;
  for (const DocBlock& block : doc.blocks) {
    const auto* h = std::get_if<DocHeading>(&block);
    if (h != nullptr && !h->anchor.empty() && h->level <= 3) out.push_back(h);
  }
  return out;
}

struct HtmlBlock {
  std::string& out;
  const Document& doc;
  void operator()(const DocHeading& h) const {
    const std::string id = h.anchor.empty() ? "" : fmt::format(" id=\"{}\"", h.anchor);
    out += fmt::format("<h{0}{1}>{2}</h{0}>\n", h.level, id, html_escape(h.text));
  }
  void operator()(const DocParagraph& p) const {
    out += fmt::format("<p>{}</p>\n", html_escape(p.text));
  }
  void operator()(const DocFigure& f) const {
    out += fmt::format(
        "<figure><a href=\"{0}\"><img src=\"{1}\" alt=\"{2}\"></a><figcaption>{3} "
        "(<a href=\"{0}\">SVG</a>)</figcaption></figure>\n",
        html_escape(f.svg),
        f.png_data_uri.empty() ? html_escape(f.png) : f.png_data_uri,
        html_escape(f.alt),
        html_escape(f.caption));
  }
  void operator()(const DocTable& t) const {
    out += "<table>\n<tr>";
    for (const auto& h : t.headers) out += fmt::format("<th>{}</th>", html_escape(h));
    out += "</tr>\n";
    for (const auto& row : t.rows) {
      out += "<tr>";
      for (const auto& cell : row) out += fmt::format("<td>{}</td>", html_cell(cell));
      out += "</tr>\n";
    }
    const std::string latex =
        t.name.empty() ? "" : fmt::format(" (<a href=\"{}.tex\">LaTeX</a>)", html_escape(t.name));
    if (!t.caption.empty() || !latex.empty())
      out += fmt::format("<caption>{}{}</caption>\n", html_escape(t.caption), latex);
    out += "</table>\n";
  }
  void operator()(const DocList& l) const {
    out += "<ul>\n";
    for (const auto& item : l.items) out += fmt::format("<li>{}</li>\n", html_escape(item));
    out += "</ul>\n";
  }
  void operator()(const DocToc&) const {
    out += "<nav class=\"toc\"><strong>Contents</strong>\n<ul>\n";
    for (const DocHeading* h : toc_entries(doc)) {
      out += fmt::format("<li class=\"toc{}\"><a href=\"#{}\">{}</a></li>\n",
                         h->level,
                         html_escape(h->anchor),
                         html_escape(h->text));
    }
    out += "</ul></nav>\n";
  }
  void operator()(const DocDetailsBegin& d) const {
    out += fmt::format("<details><summary>{}</summary>\n", html_escape(d.summary));
  }
  void operator()(const DocDetailsEnd&) const { out += "</details>\n"; }
};

struct MarkdownBlock {
  std::string& out;
  const Document& doc;
  void operator()(const DocHeading& h) const {
    if (!h.anchor.empty()) out += fmt::format("<a id=\"{}\"></a>\n\n", h.anchor);
    out +=
        fmt::format("{} {}\n\n", std::string(static_cast<size_t>(h.level), '#'), md_escape(h.text));
  }
  void operator()(const DocParagraph& p) const { out += md_escape(p.text) + "\n\n"; }
  void operator()(const DocFigure& f) const {
    out += fmt::format(
        "![{}]({})\n\n*{}* ([SVG]({}))\n\n", md_escape(f.alt), f.png, md_escape(f.caption), f.svg);
  }
  void operator()(const DocTable& t) const {
    std::string line = "|", rule = "|";
    for (const auto& h : t.headers) {
      line += fmt::format(" {} |", md_escape(h));
      rule += " --- |";
    }
    out += line + "\n" + rule + "\n";
    for (const auto& row : t.rows) {
      out += "|";
      for (const auto& cell : row) out += fmt::format(" {} |", md_escape(cell));
      out += "\n";
    }
    out += "\n";
    const std::string latex = t.name.empty() ? "" : fmt::format(" ([LaTeX]({}.tex))", t.name);
    if (!t.caption.empty() || !latex.empty())
      out += fmt::format("*{}*{}\n\n", md_escape(t.caption), latex);
  }
  void operator()(const DocList& l) const {
    for (const auto& item : l.items) out += fmt::format("- {}\n", md_escape(item));
    out += "\n";
  }
  void operator()(const DocToc&) const {
    for (const DocHeading* h : toc_entries(doc)) {
      out +=
          fmt::format("{}- [{}](#{})\n", h->level == 3 ? "  " : "", md_escape(h->text), h->anchor);
    }
    out += "\n";
  }
  void operator()(const DocDetailsBegin& d) const {
    out += fmt::format("<details><summary>{}</summary>\n\n", html_escape(d.summary));
  }
  void operator()(const DocDetailsEnd&) const { out += "</details>\n\n"; }
};

}  // namespace

void embed_figures(Document& doc, const std::string& dir) {
  for (DocBlock& block : doc.blocks) {
    auto* figure = std::get_if<DocFigure>(&block);
    if (figure == nullptr) continue;
    std::ifstream in(std::filesystem::path(dir) / figure->png, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (!bytes.str().empty()) figure->png_data_uri = "data:image/png;base64," + base64(bytes.str());
  }
}

std::string render_html(const Document& doc) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
      html_escape(doc.title),
      kStyle);
  for (const DocBlock& block : doc.blocks) std::visit(HtmlBlock{out, doc}, block);
  out += "</body>\n</html>\n";
  return out;
}

std::string render_markdown(const Document& doc) {
  std::string out = fmt::format("# {}\n\n", md_escape(doc.title));
  for (const DocBlock& block : doc.blocks) std::visit(MarkdownBlock{out, doc}, block);
  return out;
}

}  // namespace gpudays
