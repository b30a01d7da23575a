"""Writes of the benchmarks app: imports of gold data (`gold`) and evaluation runs (`runs`)."""
from benchmarks.services.gold import (  # noqa: F401
    BenchmarkImportError,
    GoldImportError,
    GoldPublishError,
    benchmark_import_545,
    benchmark_import_files,
    gold_set_create_from_rows,
    gold_set_import_file,
    gold_set_publish,
    version_approve,
)
from benchmarks.services.runs import (  # noqa: F401
    RunError,
    evaluation_run_create,
    pilot_run_create,
    similarity_run_create,
)
