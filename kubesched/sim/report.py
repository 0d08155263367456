"""Reports of the what-if workbench (compare, capacity, replay): one self-contained HTML file
with plots, plus every number as JSON and every plotted series as CSV.

Why: a comparison or a replay is read by people (the HTML, opened offline: no scripts, no
fonts, no network at view time) and by programs (the JSON and CSVs, which hold exactly what
the plots show). Plots are drawn by matplotlib (Agg, no pyplot global state) as SVG with
text rendered as paths and a fixed hash salt, so the same data gives byte-identical files.

Usage::

    r = Report("compare: least vs most")
    r.heading("Summary")
    r.text("MostAllocated uses 2 nodes fewer.")
    r.table("per configuration", ["config", "scheduled"], [["least", 8], ["most", 8]])
    r.line_plot("pending over time", {"least": [(0, 3), (1, 0)]}, "time (s)", "pods")
    r.bar_plot("nodes used", ["least", "most"], {"nodes": [4, 2]}, "config", "nodes")
    r.histogram("cpu utilisation", {"least": [0.5, 0.25]}, "fraction", bins=10, range=(0, 1))
    path = r.write(out_dir)          # -> out_dir/report.html

Layout written by ``write(out_dir)`` (the directory is created; files of an earlier report
there are overwritten, nothing else is touched)::

    out_dir/report.html      the report: CSS inline, each plot an inline <svg>
    out_dir/report.json      {"title": ..., "sections": [...]}: every section in order,
                             tables with columns and rows, plots with their full data
                             and the relative path of their CSV ("csv")
    out_dir/series/NN-<slug>.csv
                             one file per plot, NN its position among the plots (01, 02, ...),
                             slug from its title; long format with a header row:
                               line plot:  series,x,y
                               bar plot:   category,series,value
                               histogram:  series,value      (the raw samples, not the bins)

Values in tables and JSON are ``str | int | float | bool | None``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

Cell = Union[str, int, float, bool, None]
Point = tuple[float, float]

_FIG_SIZE = (7.0, 3.6)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:72em;padding:0 1em;color:#1d2330;line-height:1.45}
h1{border-bottom:2px solid #3b6fb6;padding-bottom:.2em}
h2{margin-top:1.6em;color:#23436e}
table{border-collapse:collapse;margin:.6em 0 1.2em 0;font-size:.92em}
th,td{border:1px solid #c9d2e0;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#eef2f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
figure{margin:1em 0 1.6em 0}
figure svg{max-width:100%;height:auto}
figcaption{font-weight:600;margin-bottom:.3em}
figcaption a{font-weight:400;font-size:.85em;margin-left:.8em}
pre{background:#f5f7fa;border:1px solid #dde3ec;padding:.6em;overflow-x:auto}
"""


@dataclass(slots=True)
class _Section:
    kind: str
    data: dict[str, Any]
    svg: str = ""
    csv_rows: list[list[Cell]] = field(default_factory=list)


def _slug(title: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:48] or "plot"


def _cell(v: Cell) -> Cell:
    if isinstance(v, float) and v != v:  # NaN has no JSON form
        return None
    return v


class Report:
    """An ordered list of sections; render with :meth:`html` / :meth:`to_dict`, or :meth:`write`."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._sections: list[_Section] = []
        self._plots = 0

    # --- sections -------------------------------------------------------------------------

    def heading(self, text: str, level: int = 2) -> None:
        """A heading; ``level`` 2 (section) to 4. The title is the only level-1 heading."""
        level = min(max(level, 2), 4)
        self._sections.append(_Section("heading", {"text": text, "level": level}))

    def text(self, text: str, *, preformatted: bool = False) -> None:
        """A paragraph (blank lines split paragraphs), or a ``<pre>`` block."""
        self._sections.append(_Section("text", {"text": text, "preformatted": preformatted}))

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
        """A table; every row must have one cell per column."""
        cols = [str(c) for c in columns]
        out: list[list[Cell]] = []
        for i, row in enumerate(rows):
            if len(row) != len(cols):
                raise ValueError(f"table {title!r}: row {i} has {len(row)} cells, expected {len(cols)}")
            out.append([_cell(v) for v in row])
        self._sections.append(_Section("table", {"title": title, "columns": cols, "rows": out}))

    def line_plot(
        self,
        title: str,
        series: Mapping[str, Sequence[Point]],
        xlabel: str,
        ylabel: str,
        *,
        step: bool = False,
        bands: Mapping[str, Sequence[tuple[float, float, float]]] | None = None,
    ) -> None:
        """One line per series of (x, y) points; ``step`` draws a step function (values
        that hold until the next point, as a queue length does); ``bands`` shades, per
        series, a range (x, low, high) around its line (a spread over runs)."""
        fig, ax = self._figure()
        rows: list[list[Cell]] = []
        data: dict[str, list[list[float]]] = {}
        spread: dict[str, list[list[float]]] = {}
        for name, points in series.items():
            xs = [float(p[0]) for p in points]
            ys = [float(p[1]) for p in points]
            if step:
                (line,) = ax.step(xs, ys, where="post", label=name)
            else:
                (line,) = ax.plot(xs, ys, label=name, marker="." if len(xs) < 40 else None)
            data[name] = [[x, y] for x, y in zip(xs, ys)]
            rows.extend([name, x, y] for x, y in zip(xs, ys))
            band = (bands or {}).get(name)
            if band:
                ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                                color=line.get_color(), alpha=0.2, linewidth=0)
                spread[name] = [[float(b[0]), float(b[1]), float(b[2])] for b in band]
        self._finish(fig, ax, xlabel, ylabel, legend=len(series) > 1)
        plot: dict[str, Any] = {"xlabel": xlabel, "ylabel": ylabel, "step": step, "series": data}
        if spread:
            plot["bands"] = spread
        self._add_plot("line", title, plot, fig, ["series", "x", "y"], rows)

    def bar_plot(
        self,
        title: str,
        categories: Sequence[str],
        series: Mapping[str, Sequence[float]],
        xlabel: str,
        ylabel: str,
    ) -> None:
        """Grouped bars: one group per category, one bar per series in each group (each
        series has one value per category)."""
        fig, ax = self._figure()
        cats = [str(c) for c in categories]
        n = max(len(series), 1)
        width = 0.8 / n
        rows: list[list[Cell]] = []
        data: dict[str, list[float]] = {}
        for k, (name, values) in enumerate(series.items()):
            if len(values) != len(cats):
                raise ValueError(f"bar plot {title!r}: series {name!r} has {len(values)} values "
                                 f"for {len(cats)} categories")
            vals = [float(v) for v in values]
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(cats))]
            bars = ax.bar(xs, vals, width=width, label=name)
            ax.bar_label(bars, fmt="%g", fontsize=8)
            data[name] = vals
            rows.extend([c, name, v] for c, v in zip(cats, vals))
        ax.set_xticks(range(len(cats)), cats)
        self._finish(fig, ax, xlabel, ylabel, legend=len(series) > 1)
        self._add_plot("bar", title, {"xlabel": xlabel, "ylabel": ylabel, "categories": cats,
                                      "series": data}, fig, ["category", "series", "value"], rows)

    def histogram(
        self,
        title: str,
        samples: Mapping[str, Sequence[float]],
        xlabel: str,
        ylabel: str = "count",
        *,
        bins: int | Sequence[float] = 10,
        range: tuple[float, float] | None = None,  # noqa: A002 (matplotlib's name)
    ) -> None:
        """Histograms of raw samples, one per series, drawn side by side on shared bins."""
        fig, ax = self._figure()
        names = list(samples)
        values = [[float(v) for v in samples[n]] for n in names]
        rows: list[list[Cell]] = []
        if any(values):
            _, edges, _ = ax.hist([v for v in values], bins=list(bins) if not isinstance(bins, int) else bins,
                                  range=range, label=names, histtype="bar")
            edge_list = [float(e) for e in edges]
        else:
            edge_list = []
        for n, vs in zip(names, values):
            rows.extend([n, v] for v in vs)
        self._finish(fig, ax, xlabel, ylabel, legend=len(names) > 1)
        self._add_plot("histogram", title, {
            "xlabel": xlabel, "ylabel": ylabel, "bins": edge_list,
            "series": {n: vs for n, vs in zip(names, values)}}, fig, ["series", "value"], rows)

    # --- output ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Everything in the report as JSON-ready data (what ``report.json`` holds)."""
        return {"title": self.title,
                "sections": [{"kind": s.kind, **s.data} for s in self._sections]}

    def html(self) -> str:
        """The whole report as one HTML document (no external resources)."""
        parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                 f"<title>{html.escape(self.title)}</title><style>{_CSS}</style></head><body>",
                 f"<h1>{html.escape(self.title)}</h1>"]
        for s in self._sections:
            parts.append(_render(s))
        parts.append("</body></html>\n")
        return "\n".join(parts)

    def write(self, out_dir: str | Path) -> Path:
        """Write report.html, report.json and series/*.csv into ``out_dir``; returns the
        path of report.html."""
        out = Path(out_dir)
        (out / "series").mkdir(parents=True, exist_ok=True)
        for s in self._sections:
            if s.kind in ("line", "bar", "histogram"):
                buf = io.StringIO()
                w = csv.writer(buf, lineterminator="\n")
                w.writerow(s.data["csvColumns"])
                w.writerows(s.csv_rows)
                (out / s.data["csv"]).write_text(buf.getvalue(), encoding="utf-8")
        (out / "report.json").write_text(
            json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        path = out / "report.html"
        path.write_text(self.html(), encoding="utf-8")
        return path

    # --- helpers --------------------------------------------------------------------------

    def _figure(self) -> tuple[Figure, Any]:
        fig = Figure(figsize=_FIG_SIZE, layout="constrained")
        FigureCanvasSVG(fig)
        ax = fig.add_subplot()
        ax.grid(True, alpha=0.3)
        return fig, ax

    @staticmethod
    def _finish(fig: Figure, ax: Any, xlabel: str, ylabel: str, *, legend: bool) -> None:
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if legend:
            ax.legend(fontsize=8)

    def _add_plot(self, kind: str, title: str, data: dict[str, Any], fig: Figure,
                  csv_columns: list[str], rows: list[list[Cell]]) -> None:
        self._plots += 1
        name = f"series/{self._plots:02d}-{_slug(title)}.csv"
        full = {"title": title, **data, "csv": name, "csvColumns": csv_columns}
        svg = _svg(fig, f"p{self._plots}-")
        self._sections.append(_Section(kind, full, svg=svg, csv_rows=rows))


def _svg(fig: Figure, id_prefix: str) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "kubesched-report"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "kubesched"})
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML declaration and DOCTYPE for inline use
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)  # RDF noise
    # Several SVGs share one HTML document, where ids are global: make each plot's unique.
    text = re.sub(r'\bid="', f'id="{id_prefix}', text)
    text = text.replace('href="#', f'href="#{id_prefix}').replace("url(#", f"url(#{id_prefix}")
    return text


def _num(v: Cell) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fmt(v: Cell) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.6g}"
    return str(v)


def _render(s: _Section) -> str:
    d = s.data
    if s.kind == "heading":
        return f"<h{d['level']}>{html.escape(d['text'])}</h{d['level']}>"
    if s.kind == "text":
        if d["preformatted"]:
            return f"<pre>{html.escape(d['text'])}</pre>"
        paras = [p for p in re.split(r"\n\s*\n", d["text"]) if p.strip()]
        return "\n".join(f"<p>{html.escape(p)}</p>" for p in paras)
    if s.kind == "table":
        head = "".join(f"<th>{html.escape(c)}</th>" for c in d["columns"])
        body = "".join(
            "<tr>" + "".join(
                f'<td class="num">{html.escape(_fmt(v))}</td>' if _num(v) else f"<td>{html.escape(_fmt(v))}</td>"
                for v in row) + "</tr>"
            for row in d["rows"])
        return (f"<table><caption>{html.escape(d['title'])}</caption>"
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    link = f'<a href="{html.escape(d["csv"])}">CSV</a>'
    return (f'<figure class="plot plot-{s.kind}"><figcaption>{html.escape(d["title"])}{link}'
            f"</figcaption>{s.svg}</figure>")
