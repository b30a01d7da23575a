"""Loci Similes benchmark, pure Python (no Django): files, matching, splits, metrics, reference-type rule,
lexical-overlap audit, evaluation and reports. See docs/loci_benchmark.md.

Public API::

    from benchmarks.loci import data, matching, splits, metrics, evaluate, report, plots
    bench = data.load_default_545()                       # or load_pairs_545 / benchmark_from_files / load_release_dir
    bench, match = matching.attach_corpus(bench, query_segments, source_segments)
    split = splits.split_from_file(bench, "ref_type")      # or splits.grouped_kfold(bench, 5, seed)
    pools = splits.build_fold_pools(bench, split, seed=0)  # Table 4 documents
    rep = evaluate.evaluate_retrieval(bench, split, methods.EngineRetrieverMethod("bm25-lemma"), pool="corpus")
    pair = evaluate.evaluate_pairwise(bench, split, pools, scorer=..., retriever=...)
"""
