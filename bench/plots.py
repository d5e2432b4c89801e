"""PNG plots of a benchmark run (matplotlib, an optional bench dependency:
`.venv/bin/pip install matplotlib`). Without matplotlib, plots are skipped with a message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common import Results, log

HOOK_LINES = (
    ("python -c pass", "k", "--"),
    ("SessionStart", "tab:blue", "-"),
    ("SessionStart (brief not cached)", "tab:blue", ":"),
    ("UserPromptSubmit (room)", "tab:orange", "-"),
    ("UserPromptSubmit (no room)", "tab:orange", ":"),
    ("UserPromptSubmit (past question: L3+L4)", "tab:red", "-."),
    ("UserPromptSubmit (room, in-process)", "tab:gray", "-"),
)


def draw(res: Results, folder: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        msg = "plots skipped: matplotlib is not installed (.venv/bin/pip install matplotlib)"
        log(msg)
        res.skipped.append(msg)
        return []
    folder.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    scale = res.data.get("scale")
    if scale and len(scale) > 1:
        made.append(_latency(plt, scale, folder / "hook_latency.png"))
        made.append(_index(plt, scale, folder / "index_scale.png"))
    locomo = res.data.get("locomo")
    if locomo:
        made.append(_tokens_recall(plt, locomo, folder / "tokens_vs_recall.png"))
    return made


def _latency(plt: Any, rows: list[dict[str, Any]], path: Path) -> Path:
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    sizes = [r["files"] for r in rows]
    for name, color, style in HOOK_LINES:
        med = [r["hooks"][name]["median_ms"] for r in rows]
        p95 = [r["hooks"][name]["p95_ms"] for r in rows]
        ax.plot(sizes, med, style, color=color, marker="o", label=name)
        ax.fill_between(sizes, med, p95, color=color, alpha=0.08)
        ratio = [r["hooks"][name]["ratio"] for r in rows]
        ax2.plot(sizes, ratio, style, color=color, marker="o", label=name)
    ax2.axhline(2.5, color="tab:blue", lw=0.8, alpha=0.6)
    ax2.axhline(2.0, color="tab:orange", lw=0.8, alpha=0.6)
    ax2.text(sizes[0], 2.52, "SessionStart target 2.5x", fontsize=8, color="tab:blue")
    ax2.text(sizes[0], 2.02, "UserPromptSubmit target 2.0x", fontsize=8, color="tab:orange")
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_xlabel("memory files")
        a.grid(alpha=0.3)
    ax.set_ylabel("ms per hook process (median; band to p95)")
    ax.set_title("Hook latency, whole process")
    ax2.set_ylabel("x python -c pass (ratio of medians)")
    ax2.set_title("Against the bare interpreter, same run")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _index(plt: Any, rows: list[dict[str, Any]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    sizes = [r["files"] for r in rows]
    ax.plot(
        sizes, [r["build_s"] * 1000 for r in rows], "-o", label="full build (memory-tool index)"
    )
    ax.plot(
        sizes,
        [r["probe"]["nochange_median_s"] * 1000 for r in rows],
        "-o",
        label="no-change refresh (stat only)",
    )
    ax.plot(
        sizes,
        [r["probe"]["one_changed_median_s"] * 1000 for r in rows],
        "-o",
        label="refresh after 1 changed file",
    )
    ax.plot(
        sizes,
        [r["probe"]["wake_refresh_median_s"] * 1000 for r in rows],
        "-o",
        label="SessionStart scoped refresh",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memory files")
    ax.set_ylabel("ms")
    ax.set_title("Index cost against tree size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _tokens_recall(plt: Any, locomo: dict[str, Any], path: Path) -> Path:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, recipe, label in zip(
        axes,
        ("sessions", "facts"),
        ("Recipe 1: one memory per session", "Recipe 2: one memory per fact"),
        strict=True,
    ):
        pts = locomo[recipe]["curve"]
        flow = [p for p in pts if p["k"] > 0]
        eager = [p for p in pts if p["k"] < 0][0]
        ax.plot(
            [p["tokens"] for p in flow],
            [p["hit"] for p in flow],
            "-o",
            label="search top 10, full text of the top k: hit@k",
        )
        ax.plot(
            [p["tokens"] for p in flow],
            [p["frac"] for p in flow],
            "-s",
            label="... share of gold items in the top k",
        )
        for p in flow:
            ax.annotate(
                f"k={p['k']}",
                (p["tokens"], p["hit"]),
                fontsize=7,
                textcoords="offset points",
                xytext=(3, -10),
            )
        ax.plot(
            [eager["tokens"]],
            [1.0],
            "k*",
            markersize=12,
            label=f"eager: every memory ({eager['tokens']:,.0f} tokens)",
        )
        ax.set_xscale("log")
        ax.set_xlabel("tokens read per question (exact cl100k)")
        ax.set_ylabel("recall")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"LoCoMo {label}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
