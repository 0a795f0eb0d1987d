"""A stage's table as an HTML page, which MLflow's artifact viewer renders: the seed-averaged table with its marks
(the best in bold, ≈ for the rest of its significance group) readable in the UI without opening a collapsed text.

The input is the Markdown the sweep prints and logs (`sentsweep.analysis.tables.to_markdown`, then its notes): a
pipe table, paragraphs, `- ` lists, `#` headings and `**bold**`; that is all that is converted, everything else
is shown as text (escaped)."""

from __future__ import annotations

import html
import re

STYLE = """body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; font-size: 14px;
  color: #1f2328; margin: 16px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #d0d7de; padding: 6px 12px; text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f6f8fa; }
td.key, th.key { text-align: left; white-space: nowrap; }
p, li { max-width: 110ch; line-height: 1.45; }"""
KEY_CLASS = ' class="key"'  # a row label's cell, left-aligned


def _inline(text: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(text.strip(), quote=False))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(lines: list[str], keys: int) -> str:
    """A pipe table's lines (header, rule, rows) as an HTML table; the first `keys` columns are the row's labels."""
    def row(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}{KEY_CLASS if index < keys else ''}>{_inline(cell)}</{tag}>"
                                for index, cell in enumerate(cells)) + "</tr>"
    return ("<table>\n<thead>" + row(_cells(lines[0]), "th") + "</thead>\n<tbody>\n"
            + "\n".join(row(_cells(line), "td") for line in lines[2:]) + "\n</tbody>\n</table>")


def _block(block: str, keys: int) -> str:
    lines = block.splitlines()
    if len(lines) >= 2 and lines[0].lstrip().startswith("|") and set(lines[1].strip()) <= set("|-: "):
        return _table(lines, keys)
    heading = re.match(r"(#{1,6})\s+(.*)", lines[0])
    if heading and len(lines) == 1:
        level = min(len(heading[1]) + 1, 6)
        return f"<h{level}>{_inline(heading[2])}</h{level}>"
    if all(line.startswith("- ") for line in lines[1:]) and (lines[0].startswith("- ") or len(lines) > 1):
        intro = "" if lines[0].startswith("- ") else f"<p>{_inline(lines[0])}</p>\n"
        items = [line[2:] for line in lines if line.startswith("- ")]
        return intro + "<ul>\n" + "\n".join(f"<li>{_inline(item)}</li>" for item in items) + "\n</ul>"
    return "<p>" + "<br>\n".join(_inline(line) for line in lines) + "</p>"


def table_page(title: str, markdown: str, keys: int) -> str:
    """An HTML page of a stage's table and notes (`markdown`), headed by `title`; `keys`: the table's row-label
    columns (left-aligned; the cells right-aligned, in tabular figures)."""
    blocks = [block for block in re.split(r"\n\s*\n", markdown.strip()) if block.strip()]
    body = "\n".join(_block(block, keys) for block in blocks)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}'
            f"</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n<h1>{html.escape(title)}</h1>\n{body}\n"
            "</body>\n</html>\n")
