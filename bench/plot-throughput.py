#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draw request throughput against request size from `bench/bench -m`.

usage: plot-throughput.py RUN.tsv OUT.png

RUN.tsv is what `bench/bench -m` prints: "#KEY<TAB>VALUE" lines naming
the CPU and the date, then one "request<TAB>COLUMN<TAB>BYTES<TAB>MEDIAN
<TAB>FASTEST" line per column and request size (MB/s).  The picture is
log-log, one line per column, with the CPU and the date in its title.
Needs python3-matplotlib (Debian); the bench itself does not.
"""

import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt  # noqa: E402 (after the backend choice)

# What each bench column is, in the legend; kernels are named as they are.
LABELS = {
    "ctr-drbg": "CTR-DRBG (OpenSSL, AES-256-CTR), EVP_RAND_generate",
    "rand-def": "RAND_bytes, OpenSSL's default DRBG",
    "rand-cc": "RAND_bytes, chacharng configured",
    "getrandom": "getrandom(2)",
    "chacha20": "EVP ChaCha20 keystream (no DRBG)",
}
STYLES = {
    "ctr-drbg": ("tab:red", "--"),
    "rand-def": ("tab:brown", "--"),
    "rand-cc": ("tab:purple", "-."),
    "getrandom": ("tab:gray", ":"),
    "chacha20": ("black", ":"),
}
KERNEL_COLOURS = ["tab:blue", "tab:green", "tab:orange", "tab:cyan",
                  "tab:olive"]


def read_run(path):
    """The #KEY values and, per column in order, its (bytes, MB/s) points."""
    meta, series = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0].startswith("#") and len(fields) >= 2:
                meta[fields[0][1:]] = fields[1]
            elif fields[0] == "request" and len(fields) == 5:
                points = series.setdefault(fields[1], [])
                points.append((int(fields[2]), float(fields[3])))
    if not series:
        sys.exit(f"{path}: no 'request' lines (is it bench -m output?)")
    return meta, series


def size_label(n):
    """4 B, 1 KiB, 1 MiB: the request sizes as people say them."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def draw(meta, series, out):
    fig, ax = plt.subplots(figsize=(10, 6.5), dpi=100)
    kernels = [c for c in series if c not in LABELS]
    for i, col in enumerate(kernels):
        xs, ys = zip(*series[col])
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=2,
                color=KERNEL_COLOURS[i % len(KERNEL_COLOURS)],
                label=f"chacharng, {col} kernel, EVP_RAND_generate")
    for col in (c for c in LABELS if c in series):
        xs, ys = zip(*series[col])
        colour, dash = STYLES[col]
        ax.plot(xs, ys, marker=".", markersize=4, linewidth=1.5,
                color=colour, linestyle=dash, label=LABELS[col])
    sizes = sorted({n for pts in series.values() for n, _ in pts})
    ticks = [n for n in sizes if n in (4, 16, 64, 256, 1024, 4096, 16384,
                                       65536, 1 << 20)]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(n) for n in ticks])
    ax.set_xlabel("request size")
    ax.set_ylabel("throughput, MB/s (10^6 bytes per second; median of"
                  " interleaved rounds)")
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.15)
    ax.set_title("Random bytes per second against request size, one thread\n"
                 f"{meta.get('cpu', 'CPU unknown')}, {meta.get('date', '')}",
                 fontsize=11)
    notes = [meta.get("openssl", ""), meta.get("system", ""),
             "kernel mixing " + ("on" if meta.get("kernel-mix") == "1"
                                 else "off") + "; bench/bench -m, "
             + meta.get("rounds", "")]
    ax.text(0.01, 0.01, "\n".join(n for n in notes if n),
            transform=ax.transAxes, fontsize=8, color="dimgray",
            verticalalignment="bottom")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    meta, series = read_run(argv[1])
    draw(meta, series, argv[2])


if __name__ == "__main__":
    main(sys.argv)
