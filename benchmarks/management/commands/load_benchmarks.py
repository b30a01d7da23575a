"""``manage.py load_benchmarks``: import a Loci Similes 545-pair release and/or an STS gold file (atomic)."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.services import (
    BenchmarkImportError,
    GoldImportError,
    benchmark_import_545,
    benchmark_import_files,
    gold_set_import_file,
)


class Command(BaseCommand):
    help = ("Import pairs_545_with_text.csv (+ pairs_545_ref_type.csv) from --loci-dir, any Latin benchmark as "
            "three plain files (--queries, --sources, --gold) and/or a graded gold TSV (--sts). A bad file stops with "
            "one error naming the line; nothing is imported then.")

    def add_arguments(self, parser):
        parser.add_argument("--loci-dir", default=None, help="folder with pairs_545_with_text.csv")
        parser.add_argument("--queries", default=None, help="query corpus CSV (seg_id,text[,author,work])")
        parser.add_argument("--sources", default=None, help="source corpus CSV (seg_id,text[,author,work])")
        parser.add_argument("--gold", default=None, help="gold CSV (query_id,source_id[,label][,fold])")
        parser.add_argument("--name", default="loci-similes-545", help="benchmark name")
        parser.add_argument("--benchmark-version", default="1", help="version label")
        parser.add_argument("--corpus-dir", default=None,
                            help="with --loci-dir: the whole corpus (query.csv, source.csv from build_corpus), so runs "
                                 "can rank against the real source corpus (pool 'corpus')")
        parser.add_argument("--skip-bad-rows", action="store_true",
                            help="with --queries/--sources/--gold: leave out (and count) a repeated segment id, a gold "
                                 "row with an unknown label or naming a missing segment, instead of stopping")
        parser.add_argument("--sts", default=None, help="gold TSV (DBBE STS shape)")
        parser.add_argument("--sts-name", default=None, help="gold set name (default: the file's stem)")

    def handle(self, *args, **o):
        files = [o["queries"], o["sources"], o["gold"]]
        if any(files) and not all(files):
            raise CommandError("--queries, --sources and --gold go together")
        if not o["loci_dir"] and not o["sts"] and not any(files):
            raise CommandError("give --loci-dir, --queries/--sources/--gold and/or --sts")
        try:
            if all(files):
                version, created = benchmark_import_files(
                    queries_path=Path(o["queries"]), sources_path=Path(o["sources"]), gold_path=Path(o["gold"]),
                    name=o["name"], version=o["benchmark_version"], skip_bad_rows=o["skip_bad_rows"])
                self._imported(version, created)
                skipped = (version.provenance or {}).get("skipped_rows")
                if skipped is not None:
                    self.stdout.write(f"skipped {len(skipped)} bad row(s)" + "".join(f"\n  {m}" for m in skipped[:10])
                                      + (f"\n  ... and {len(skipped) - 10} more" if len(skipped) > 10 else ""))
            if o["loci_dir"]:
                folder = Path(o["loci_dir"])
                ref_type = folder / "pairs_545_ref_type.csv"
                version, created = benchmark_import_545(
                    with_text_path=folder / "pairs_545_with_text.csv",
                    ref_type_path=ref_type if ref_type.exists() else None,
                    name=o["name"], version=o["benchmark_version"],
                    corpus_dir=Path(o["corpus_dir"]) if o["corpus_dir"] else None)
                self._imported(version, created)
            if o["sts"]:
                gold_set, created = gold_set_import_file(path=Path(o["sts"]), name=o["sts_name"], if_exists="return")
                self.stdout.write(f"{gold_set.name}: {gold_set.pairs.count()} pairs "
                                  f"({'imported' if created else 'already present'})")
        except (BenchmarkImportError, GoldImportError) as exc:
            raise CommandError(str(exc)) from None

    def _imported(self, version, created: bool) -> None:
        self.stdout.write(f"{version}: {version.gold.count()} gold references "
                          f"({'imported' if created else 'already present'})")
