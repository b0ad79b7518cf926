#!/usr/bin/env python3
"""The bench figure: well-formed SVG with the metric's name and the ratio
B / A (and its spread) in the title, two panels (the metric and wall time)
with tick labels on both axes, y axes from zero, one mark per measured run,
warm-up and failed runs told apart, every mark inside its frame or marked
off the axis, each median labelled outside the frame, what was compared
(parts, GPU, OS, date, cfapkg's version) in the figure and the JSON, a long
title wrapped to fit; cfapkg's own PNG (a build with cairo) decoded and
checked for its size, both environments' colours and a blank right margin,
and the SVG rendered by rsvg-convert too (which must be there).  Also the
default metric name taken from the regex, --metric-name without --metric
refused, and a metric no run printed failing the bench."""
import re
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import channel
import harness

BIN, SCORE = sys.argv[1:3]
check = harness.Checks()
NS = "{http://www.w3.org/2000/svg}"
METRIC = r"score: (\d+)"


def classes(e):
    return (e.get("class") or "").split()


def all_text(e):
    return "".join(e.itertext())


def bench(root, tmp, out, *extra, fail=None, big=None, runs="3", warmup="1"):
    """Runs bench on six and seven (a fresh run counter); returns the result
    and the parsed JSON document printed."""
    counter = tmp / "counter"
    counter.write_text("")
    out.mkdir(exist_ok=True)
    env = {"COUNTER": str(counter), "SOURCE_DATE_EPOCH": "1764547200"}
    if fail is not None:
        env["SCORE_FAIL"] = str(fail)
    if big is not None:
        env["SCORE_BIG"] = str(big)
    r = root.run("bench", "--env", "six", "--env", "seven", "-n", runs, "--warmup", warmup,
                 "-o", str(out), "--json", *extra, "--", SCORE, env=env)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = {}
    return r, doc


def parse_svg(path):
    try:
        return ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        check(f"{path.name} is well-formed XML", False, e)
        return None


def panel(svg, kind):
    for g in svg.iter(NS + "g"):
        if classes(g)[:2] == ["panel", kind]:
            return g
    return None


def is_nice(step):
    """A step of 1, 2 or 5 times a power of ten."""
    while step >= 10:
        step /= 10
    while step < 1:
        step *= 10
    return any(abs(step - k) < 1e-6 for k in (1, 2, 5))


def check_axes(p, kind):
    ticks = {"x": [], "y": []}
    for t in p.iter(NS + "text"):
        c = classes(t)
        if c[:1] == ["tick"]:
            ticks[c[1]].append(all_text(t))
    ys = [float(v) for v in ticks["y"]]
    steps = [round(b - a, 9) for a, b in zip(ys, ys[1:])]
    check(f"{kind}: tick labels on both axes", len(ticks["x"]) >= 2 and len(ys) >= 3,
          ticks)
    check(f"{kind}: y ticks in equal nice steps (1-2-5)",
          steps and len(set(steps)) == 1 and is_nice(steps[0]), ys)
    titles = [all_text(t) for t in p.iter(NS + "text") if classes(t)[:1] == ["axis-title"]]
    return titles


def check_marks(p, kind, measured, warmups, failed):
    marks = [g for g in p.iter(NS + "g") if classes(g)[:1] == ["run"]]
    got = [g for g in marks if "measured" in classes(g)]
    check(f"{kind}: one mark per measured run", len(got) == measured, len(got))
    check(f"{kind}: warm-up runs marked apart",
          len([g for g in marks if "warmup" in classes(g)]) == warmups)
    check(f"{kind}: failed runs marked", len([g for g in marks if "failed" in classes(g)]) ==
          failed, [g.get("class") for g in marks])
    check(f"{kind}: each mark names its run",
          all(g.find(NS + "title") is not None and
              all_text(g.find(NS + "title")).startswith("run ") for g in marks))
    labels = [all_text(t) for t in p.iter(NS + "text") if classes(t)[:1] == ["median-label"]]
    lines = [ln for ln in p.iter(NS + "line") if classes(ln)[:1] == ["median"]]
    check(f"{kind}: each median drawn and labelled", len(labels) == 2 and len(lines) == 2,
          labels)
    return labels


def check_plain(path):
    text = path.read_text(encoding="utf-8")
    check(f"{path.name}: no scripts, links or external fonts",
          not any(w in text.lower() for w in ("<script", "href", "@font-face", "url(",
                                              "@import")))


def png_pixels(data):
    """(width, height, rows of RGBA bytes) of an 8-bit non-interlaced PNG."""
    pos, chunks = 8, {}
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunks.setdefault(kind, []).append(data[pos + 8:pos + 8 + n])
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    assert depth == 8 and interlace == 0 and ctype in (2, 6), (depth, ctype, interlace)
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride, rows, prev = w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 4 else
                    b"".join(bytes(line[i:i + 3]) + b"\xff" for i in range(0, stride, 3)))
        prev = line
    return w, h, rows


def hex_rgb(s):
    return tuple(int(s[i:i + 2], 16) for i in (1, 3, 5))


def check_png(svg_path, svg, colours):
    rsvg = shutil.which("rsvg-convert")
    check("rsvg-convert is installed (scripts/setup: librsvg2-bin)", rsvg is not None)
    if not rsvg:
        return
    png = svg_path.with_suffix(".png")
    r = subprocess.run([rsvg, "-o", str(png), str(svg_path)], capture_output=True, text=True,
                       timeout=harness.TIMEOUT)
    check("rsvg-convert renders the figure", r.returncode == 0 and png.exists(), r.stderr)
    if r.returncode != 0:
        return
    data = png.read_bytes()
    check("the PNG has the PNG signature", data[:8] == b"\x89PNG\r\n\x1a\n")
    w, h, rows = png_pixels(data)
    check("the PNG has the SVG's size", (w, h) == (int(svg.get("width")), int(svg.get("height"))),
          (w, h, svg.get("width"), svg.get("height")))
    counts = {c: 0 for c in colours}
    ink = 0
    for row in rows:
        for i in range(0, len(row), 4):
            px = tuple(row[i:i + 3])
            ink += px != (255, 255, 255)
            for c in colours:
                if all(abs(x - y) <= 3 for x, y in zip(px, c)):
                    counts[c] += 1
    check("the PNG is not blank", ink > w * h // 100, ink)
    check("the PNG has pixels of both environments' colours",
          all(n >= 20 for n in counts.values()), counts)


def frame_of(p):
    """(x0, y0, x1, y1) of a panel's frame."""
    for g in p.iter(NS + "g"):
        if classes(g)[:1] == ["frame"]:
            r = g.find(NS + "rect")
            x, y = float(r.get("x")), float(r.get("y"))
            return x, y, x + float(r.get("width")), y + float(r.get("height"))
    return None


def mark_point(g):
    """Where a run's mark is drawn: a circle's centre, a cross's or an
    arrow's (paths start at a corner or a tip)."""
    c = g.find(NS + "circle")
    if c is not None:
        return float(c.get("cx")), float(c.get("cy"))
    m = re.match(r"M([-\d.]+) ([-\d.]+)", g.find(NS + "path").get("d"))
    x, y = float(m.group(1)), float(m.group(2))
    return (x, y + 4) if "offscale" in classes(g) else (x + 4, y + 4)


def check_inside(p, kind):
    """Every mark inside the frame, an off-scale one on its edge; the y
    axis from zero; the median labels right of the frame."""
    box = frame_of(p)
    check(f"{kind}: the panel has a frame", box is not None)
    if box is None:
        return
    x0, y0, x1, y1 = box
    outside = []
    for g in p.iter(NS + "g"):
        if classes(g)[:1] == ["run"]:
            x, y = mark_point(g)
            if not (x0 <= x <= x1 and y0 <= y <= y1):
                outside.append((g.get("class"), x, y))
    check(f"{kind}: every mark is inside the axes", not outside, (box, outside))
    ys = [float(all_text(t)) for t in p.iter(NS + "text") if classes(t)[:2] == ["tick", "y"]]
    check(f"{kind}: the y axis starts at zero (a ratio is read off heights)",
          ys and ys[0] == 0, ys)
    labels = [float(t.get("x")) for t in p.iter(NS + "text")
              if classes(t)[:1] == ["median-label"]]
    check(f"{kind}: median labels sit right of the frame, off the marks",
          labels and all(x > x1 for x in labels), (labels, x1))


def check_about(svg, doc):
    """What was compared, in the figure's foot and the JSON's about."""
    foot = " ".join(all_text(t) for t in svg.iter(NS + "text") if "about" in classes(t))
    check("the figure names each environment's ZLUDA", "A six: zluda 6-preview.69" in foot and
          "B seven: zluda 7-preview.10" in foot, foot)
    check("the figure names the GPU, the OS, the date and cfapkg's version",
          "GPU: gfx1200" in foot and "linux" in foot.lower() + "windows" and
          "2025-12-01 00:00 UTC" in foot and re.search(r"cfapkg \d+\.\d+", foot), foot)
    about = doc.get("about", {})
    envs = {e.get("name"): e for e in about.get("envs", [])}
    check("the JSON says what was compared",
          about.get("cfapkg_version") and about.get("date") == "2025-12-01 00:00 UTC" and
          "gfx1200" in about.get("gpu", "") and about.get("os") and
          {"name": "zluda", "version": "6-preview.69"} in envs.get("six", {}).get("packages", [])
          and envs.get("seven", {}).get("generation", 0) >= 1, about)


def check_own_png(out, svg, colours):
    """cfapkg's own PNG (cairo): decodes, has the SVG's size, both colours,
    and nothing in its right margin (no text runs off)."""
    png = out / "bench-six-vs-seven.png"
    if harness.EMULATOR:
        check("a build without cairo writes no PNG", not png.exists())
        return
    check("bench wrote a PNG beside the SVG", png.exists())
    if not png.exists():
        return
    data = png.read_bytes()
    check("cfapkg's PNG has the PNG signature", data[:8] == b"\x89PNG\r\n\x1a\n")
    w, h, rows = png_pixels(data)
    check("cfapkg's PNG is forum size and the SVG's", (w, h) == (int(svg.get("width")),
                                                               int(svg.get("height"))) and
          w == 800, (w, h))
    counts = {c: 0 for c in colours}
    margin = 0
    for row in rows:
        for i in range(0, len(row), 4):
            px = tuple(row[i:i + 3])
            if i // 4 >= w - 6 and px != (255, 255, 255):
                margin += 1
            for c in colours:
                if all(abs(x - y) <= 3 for x, y in zip(px, c)):
                    counts[c] += 1
    check("cfapkg's PNG has pixels of both environments' colours",
          all(n >= 20 for n in counts.values()), counts)
    check("nothing reaches the PNG's right edge (titles and labels fit)", margin == 0, margin)


def check_figure(out, doc):
    path = out / "bench-six-vs-seven.svg"
    svg = parse_svg(path)
    if svg is None:
        return
    check_plain(path)
    title = svg.find(f".//{NS}text[@id='title']")
    head = all_text(title) if title is not None else ""
    check("the title names the metric and gives B / A with its spread",
          head.startswith("score (points): seven / six = 1.75") and "per-round 1.2 to 2.67" in head,
          head)
    check("the SVG has a <title> too", svg.find(NS + "title") is not None)
    m, w = panel(svg, "metric"), panel(svg, "wall")
    check("two panels: the metric and wall time", m is not None and w is not None)
    if m is None or w is None:
        return
    check("the metric's axis is named", "score (points)" in check_axes(m, "metric"))
    check("wall time's axis says seconds", "wall time (s)" in check_axes(w, "wall time"))
    labels = check_marks(m, "metric", 6, 2, 0)
    check("the metric medians are labelled with their values",
          sorted(labels) == ["A median 4", "B median 7"], labels)
    check_marks(w, "wall time", 6, 2, 0)
    legend = [all_text(g) for g in svg.iter(NS + "g") if classes(g)[:1] == ["legend"]]
    check("the legend names both environments", "A: six" in legend and "B: seven" in legend,
          legend)
    fills = {}
    for g in svg.iter(NS + "g"):
        if classes(g)[:1] == ["legend"] and g.find(NS + "rect") is not None:
            fills[classes(g)[1]] = g.find(NS + "rect").get("fill")
    check("the environments have two colours", len(set(fills.values())) == 2, fills)
    ratio = doc.get("stats", {}).get("metric", {}).get("ratio", {})
    check("the JSON names the ratio and its spread", doc.get("metric_name") == "score (points)"
          and ratio.get("of") == "seven / six" and ratio.get("of_medians") == 1.75 and
          abs(ratio.get("per_round_min", 0) - 1.2) < 1e-9 and
          abs(ratio.get("per_round_max", 0) - 8 / 3) < 1e-9 and ratio.get("rounds") == 3, doc)
    colours = [hex_rgb(c) for c in fills.values()] if len(fills) == 2 else []
    for p, kind in ((m, "metric"), (w, "wall time")):
        check_inside(p, kind)
    check_about(svg, doc)
    check_own_png(out, svg, colours)
    check_png(path, svg, colours)


def test_offscale(root, tmp):
    """A warm-up run far past the others: drawn at the top edge as an
    arrow with its value, not on the frame, and the axis not flattened."""
    out = tmp / "offscale"
    r, doc = bench(root, tmp, out, "--metric", METRIC, big=0)
    svg = parse_svg(out / "bench-six-vs-seven.svg")
    p = panel(svg, "metric") if svg is not None else None
    if p is None:
        check("a figure with an outlier", False, r.stderr)
        return
    off = [g for g in p.iter(NS + "g") if "offscale" in classes(g)]
    check("the outlier is marked off the axis, with its value",
          len(off) == 1 and "1000" in all_text(off[0]) and "run 1" in all_text(off[0]), 
          [all_text(g) for g in off])
    check_inside(p, "metric with an outlier")
    ys = [float(all_text(t)) for t in p.iter(NS + "text") if classes(t)[:2] == ["tick", "y"]]
    check("the axis is scaled to the counted runs, not to the outlier", ys and ys[-1] < 100, ys)


def test_long_title(root, tmp):
    """A long metric name: the title wraps onto two lines, and nothing runs
    off the PNG."""
    out = tmp / "long"
    name = "throughput of the whole denoising loop in images per second (higher is better)"
    r, doc = bench(root, tmp, out, "--metric", METRIC, "--metric-name", name)
    svg = parse_svg(out / "bench-six-vs-seven.svg")
    title = svg.find(f".//{NS}text[@id='title']") if svg is not None else None
    check("a long title is wrapped", title is not None and len(title.findall(NS + "tspan")) >= 2
          and all_text(title).startswith(name + ": seven / six = 1.75"),
          all_text(title) if title is not None else r.stderr)
    if svg is not None and not harness.EMULATOR:
        check_own_png(out, svg, [])


def test_figure(root, tmp):
    out = tmp / "plot"
    r, doc = bench(root, tmp, out, "--metric", METRIC, "--metric-name", "score (points)")
    check("bench with a named metric", r.returncode == 0, r.stderr)
    check_figure(out, doc)


def test_failed(root, tmp):
    """Run 6 (seven's second measured run) fails: crossed out in both
    panels, still one mark per measured run, its round left out."""
    out = tmp / "failed"
    r, doc = bench(root, tmp, out, "--metric", METRIC, fail=5)
    check("a failed run makes bench fail", r.returncode == 1, r.stderr)
    svg = parse_svg(out / "bench-six-vs-seven.svg")
    if svg is None:
        return
    for kind in ("metric", "wall"):
        p = panel(svg, kind)
        check(f"{kind} panel with a failed run", p is not None)
        if p is not None:
            check_marks(p, f"{kind} (a failed run)", 6, 2, 1)
    check("a failed run's round is left out of the per-round ratios",
          doc.get("stats", {}).get("metric", {}).get("ratio", {}).get("rounds") == 2, doc)


def test_wall_only(root, tmp):
    out = tmp / "wall"
    r, doc = bench(root, tmp, out, runs="2", warmup="0")
    svg = parse_svg(out / "bench-six-vs-seven.svg")
    if svg is None:
        return
    head = all_text(svg.find(f".//{NS}text[@id='title']"))
    check("without a metric: one panel of wall time",
          panel(svg, "metric") is None and panel(svg, "wall") is not None and
          head.startswith("wall time: seven / six = "), head)
    p = panel(svg, "wall")
    if p is not None:
        check_marks(p, "wall time alone", 4, 0, 0)
    check("no metric name without a metric", "metric_name" not in doc or
          doc["metric_name"] is None, doc.get("metric_name"))


def test_names(root, tmp):
    """The default name: the regex's text before its group, without the
    punctuation around it; a named group's name; else "metric"."""
    cases = {r"TFLOPS: ([0-9.]+)": "TFLOPS",
             r"score: (\d+)": "score",
             r"^\s*Iter time\s*=\s*([0-9.]+) ms": "Iter time",
             r"throughput \(img/s\): ([0-9.]+)": "throughput (img/s)",
             r"(?i)GPU util(?:ization)?: (\d+)%": "GPU util",
             r"(?<tflops>[0-9.]+) TFLOPS": "tflops",
             r"(\d+) img/s": "metric"}
    for regex, want in cases.items():
        r, doc = bench(root, tmp, tmp / "names", "--metric", regex, runs="1", warmup="0")
        check(f"the metric {regex!r} is named {want!r}", doc.get("metric_name") == want,
              (doc.get("metric_name"), r.stderr))
    odd = 'a<b & "c" \u00e9'
    r, doc = bench(root, tmp, tmp / "odd", "--metric", METRIC, "--metric-name", odd, runs="1",
                   warmup="0")
    svg = parse_svg(tmp / "odd" / "bench-six-vs-seven.svg")
    check("a name with XML's special characters is escaped",
          svg is not None and all_text(svg.find(f".//{NS}text[@id='title']")).startswith(odd))
    r = root.run("bench", "--env", "six", "--env", "seven", "--metric-name", "x", "--", SCORE)
    check("--metric-name without --metric is refused", r.returncode == 2 and
          "--metric" in r.stderr, r.stderr)
    r, doc = bench(root, tmp, tmp / "nothing", "--metric", r"speed: (\d+)", runs="1",
                   warmup="0")
    check("a metric no run printed fails the bench, naming the regex", r.returncode == 1 and
          "speed: (\\d+)" in r.stderr and "printed the metric" in r.stderr, r.stderr)


def main():
    with channel.served("cfapkg-plot-", headers=2, big=100) as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        for env, version in (("six", "6-preview.69"), ("seven", "7-preview.10")):
            root.run("env", "create", env)
            r = root.run("install", "--env", env, f"zluda=={version}", *channel.FACTS, "--yes")
            check(f"install zluda {version} into {env}", r.returncode == 0, r.stderr)
        test_figure(root, tmp)
        test_offscale(root, tmp)
        test_long_title(root, tmp)
        test_failed(root, tmp)
        test_wall_only(root, tmp)
        test_names(root, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
