"""manage.py search_corpus: one passage against a built corpus index, every channel with its explanation."""
import json

from django.core.management.base import BaseCommand
from django.http import QueryDict

from core.commands import command_errors
from detection.corpus_reads import corpus_get, corpus_search_run, request_from


class Command(BaseCommand):
    help = "Search one Latin passage against a corpus: the top k segments with every channel's score."

    def add_arguments(self, p):
        p.add_argument("--corpus", required=True)
        p.add_argument("--query", required=True, help="the passage (at most 400 characters)")
        p.add_argument("--top-k", type=int, default=10)
        p.add_argument("--genre", choices=("verse", "prose"), default="")
        p.add_argument("--author", action="append", default=[])
        p.add_argument("--work", action="append", default=[])
        p.add_argument("--json", action="store_true", help="the whole answer as JSON")

    def handle(self, *args, **o):
        params = QueryDict(mutable=True)
        params.update({"q": o["query"], "k": str(o["top_k"]), "genre": o["genre"]})
        params.setlist("author", o["author"])
        params.setlist("work", o["work"])
        with command_errors():
            result = corpus_search_run(corpus_get(o["corpus"]), request_from(params))
        if o["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1))
            return
        for h in result["hits"]:
            chans = ", ".join(f"{c['name']} {c['contribution']:.2f}" + (
                f" ({'; '.join('/'.join(m) for m in c['matches'][:3])})" if c["matches"] else "")
                for c in h["explanation"].get("channels", []))
            self.stdout.write(f"{h['rank']:>3} {h['score']:7.3f}  {h['citation']:<28} {h['text']}\n      {chans}")
        self.stdout.write(f"{result['n_segments']:,} segments searched in {result['cpu_ms']} ms CPU"
                          + (f"; own work {result['excluded_work']} left out" if result["excluded_work"] else ""))
