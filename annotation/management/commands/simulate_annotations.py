from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from annotation.services.simulation import simulate_annotations


class Command(BaseCommand):
    help = ("Simulate annotators from latent strengths (the imported gold scores where present) and record their "
            "judgements through the same services as real annotators.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--annotators", type=int, default=3)
        parser.add_argument("--judgements-per-pair", type=int, default=1)
        parser.add_argument("--noise", type=float, default=1.0, help="logistic noise scale (larger = noisier)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--batch", type=int, action="append", help="batch id (repeatable); default all open batches")
        parser.add_argument("--max-judgements", type=int, default=None)

    def handle(self, *args, **o):
        project = Project.objects.filter(name=o["project"]).first()
        if project is None:
            raise CommandError(f"No project named {o['project']!r}.")
        if o["annotators"] < 1 or o["judgements_per_pair"] < 1 or o["noise"] <= 0:
            raise CommandError("--annotators and --judgements-per-pair must be ≥ 1 and --noise > 0.")
        summary = simulate_annotations(
            project=project, annotators=o["annotators"], judgements_per_pair=o["judgements_per_pair"],
            noise=o["noise"], seed=o["seed"], batch_ids=o["batch"], max_judgements=o["max_judgements"],
            progress=lambda f, m: self.stdout.write(f"  {f:5.1%} {m}") if f >= 1 or int(f * 100) % 10 == 0 else None,
        )
        for name, count in summary["batches"].items():
            self.stdout.write(f"{name}: {count} judgements")
        self.stdout.write(f"total {summary['judgements']} judgements by {', '.join(summary['annotators'])}")
