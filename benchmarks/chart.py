"""A log-log SVG chart of time vs argument size, written by hand (no plotting dependency)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from benchmarks.workloads import size_label

PALETTE = [
    "#d62728",
    "#1f77b4",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000000",
]


@dataclass
class Line:
    """One contender: measured points, and where (if anywhere) it hit the cap."""

    label: str
    points: list[tuple[int, float]] = field(default_factory=list)
    capped_at: tuple[int, float] | None = None
    dashed: bool = False
    bold: bool = False


def _ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _seconds_label(value: float) -> str:
    if value >= 1:
        return f"{value:g} s"
    if value >= 1e-3:
        return f"{value * 1e3:g} ms"
    return f"{value * 1e6:g} µs"


def render(title: str, lines: list[Line], *, subtitle: str = "") -> str:
    """SVG text: x = argument bytes (log2 scale), y = seconds (log10 scale)."""
    width, height = 1140, 600
    left, right, top, bottom = 80, 440, 60, 60
    xs = [x for ln in lines for x, _ in ln.points] + [ln.capped_at[0] for ln in lines if ln.capped_at]
    ys = [y for ln in lines for _, y in ln.points] + [ln.capped_at[1] for ln in lines if ln.capped_at]
    if not xs:
        xs, ys = [1024, 2048], [1e-3, 1e-2]
    x_lo, x_hi = math.log2(min(xs)), math.log2(max(xs))
    if x_hi == x_lo:
        x_hi += 1
    y_ticks = _ticks(min(ys), max(ys) * 2)  # headroom for the "> cap" labels
    y_lo, y_hi = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
    if y_hi == y_lo:
        y_hi += 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (math.log2(x) - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (math.log10(y) - y_lo) / (y_hi - y_lo) * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>',
        f'<text x="{left}" y="44" fill="#555">{escape(subtitle)}</text>',
    ]
    for y in y_ticks:
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{escape(_seconds_label(y))}</text>')
    for e in range(math.ceil(x_lo), math.floor(x_hi) + 1):
        x = 2**e
        if e % 2 and x_hi - x_lo > 8:
            continue
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{escape(size_label(x))}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 16}" text-anchor="middle">argument size (UTF-8 bytes)</text>'
    )
    out.append(
        f'<text x="18" y="{top + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + plot_h / 2})">time (best run)</text>'
    )
    capped = 0
    for i, line in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if line.dashed else ""
        stroke = 3 if line.bold else 1.6
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
        if line.points:
            out.append(
                f'<polyline data-label="{escape(line.label)}" points="{pts}" fill="none" '
                f'stroke="{color}" stroke-width="{stroke}"{dash}/>'
            )
            for x, y in line.points:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.6" fill="{color}"/>')
        if line.capped_at:
            cx, cy = px(line.capped_at[0]), py(line.capped_at[1])
            lift = 8 + 14 * (capped % 3)  # stagger labels of caps that land close together
            capped += 1
            out.append(
                f'<text x="{cx:.1f}" y="{cy - lift:.1f}" fill="{color}" text-anchor="middle">'
                f"&gt; {escape(_seconds_label(line.capped_at[1]))}</text>"
            )
            out.append(
                f'<path d="M{cx - 5:.1f},{cy - 5:.1f} L{cx + 5:.1f},{cy + 5:.1f} '
                f'M{cx - 5:.1f},{cy + 5:.1f} L{cx + 5:.1f},{cy - 5:.1f}" stroke="{color}" '
                'stroke-width="2"/>'
            )
        ly = top + 10 + i * 20
        lx = left + plot_w + 16
        out.append(
            f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="{stroke}"{dash}/>'
        )
        out.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(line.label)}</text>')
    out.append(
        f'<text x="{left + plot_w + 16}" y="{top + 20 + len(lines) * 20}" fill="#555">x = stopped at the cap</text>'
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"
