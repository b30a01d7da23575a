"""Verse benchmarks, pure Python (no Django): line-level texts and commentary parallels.

Public API::

    from benchmarks.verse.lucan_vergil import load_lucan_vergil, evaluate_verse
    bench = load_lucan_vergil()                         # Lucan BC 2-10 lines -> Aeneid lines, 816 parallels
    report = evaluate_verse(bench, ranked, scores=scores)
"""
