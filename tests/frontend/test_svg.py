"""frontend/svg.py, the one SVG module: lines with gaps, log axis, std bands, dashes and marks; grouped scatter."""
import math
import re

from frontend.svg import line_chart, scatter


def _points(polyline: str) -> list[tuple[float, float]]:
    coords = re.search(r'points="([^"]+)"', polyline).group(1).split()
    return [tuple(map(float, c.split(","))) for c in coords]


def test_line_chart_gaps_log_axis_bands_dashes_and_marks():
    svg = line_chart({"a": [(1, 0.2), (10, None), (100, 0.6), (1000, 0.8)], "b": [(1, 0.5), (1000, math.nan)]},
                     title="t <&>", xlabel="k", ylabel="recall", ymin=0, ymax=1, log_x=True,
                     styles={"a": {"std": [0.1, None, 0.05, 0.0], "dash": True}, "b": {"color": "#123456"}},
                     marks=[(100, 0.6, "best")])
    assert svg.startswith("<svg") and "t &lt;&amp;&gt;" in svg
    lines = re.findall(r"<polyline[^>]+>", svg)
    assert len(lines) == 3  # a: [1] and [100, 1000] around the gap; b: one point
    first, second, third = (_points(x) for x in lines)
    assert len(first) == 1 and len(second) == 2 and len(third) == 1
    # log axis: 1 → 100 is as far as 100 → 10000 would be; 100 → 1000 is half of 1 → 100
    x1, x100, x1000 = first[0][0], second[0][0], second[1][0]
    assert abs((x1000 - x100) - (x100 - x1) / 2) < 0.2
    assert 'stroke-dasharray="5 3"' in lines[0] and "#123456" in lines[2]
    assert svg.count("<polygon") == 2  # the ±std bands of both runs of "a"
    assert ">best</text>" in svg and ">1000</text>" in svg
    assert "no data yet" in line_chart({"a": [(1, None)]}, title="t", xlabel="x", ylabel="y")


def test_scatter_groups_get_colours_legend_and_tooltips():
    svg = scatter([(0.1, 0.2), (0.5, math.nan), (0.9, 0.8)], title="s", xlabel="x", ylabel="y",
                  groups=["ref A", "ref A", "ref B"])
    circles = re.findall(r"<circle[^>]*>(?:<title>[^<]*</title></circle>)?", svg)
    assert len([c for c in circles if "<title>" in c]) == 2  # the NaN point is not drawn
    assert "ref A: 0.100 / 0.200" in svg and ">ref B</text>" in svg
    fills = set(re.findall(r'fill="(#[0-9a-f]{6})" fill-opacity', svg))
    assert len(fills) == 2
