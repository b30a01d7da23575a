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
        parser.add_argument("--no-calibration", action="store_true",
                            help="the old fixed strengths θ = 6 · gold instead of noise calibrated to the project's "
                                 "agreement (or the DBBE gold's)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--attention-fail-rate", type=float, default=0.1,
                            help="share of attention checks the simulated annotators fail (the sloppy more often than "
                                 "the careful; 0–1, default 0.1)")
        parser.add_argument("--batch", type=int, action="append", help="batch id (repeatable); default all open batches")
        parser.add_argument("--max-judgements", type=int, default=None)
        parser.add_argument("--compare-designs", type=int, default=0, metavar="SEEDS",
                            help="instead of recording judgements: compare the exhaustive, random and adaptive designs "
                                 "on the first batch's strengths with this many seeds (nothing is written)")
        parser.add_argument("--target", type=float, default=0.95, help="with --compare-designs: the ρ to reach")

    def handle(self, *args, **o):
        project = Project.objects.filter(name=o["project"]).first()
        if project is None:
            raise CommandError(f"No project named {o['project']!r}.")
        if o["annotators"] < 1 or o["judgements_per_pair"] < 1 or o["noise"] <= 0:
            raise CommandError("--annotators and --judgements-per-pair must be ≥ 1 and --noise > 0.")
        if not 0 <= o["attention_fail_rate"] <= 1:
            raise CommandError("--attention-fail-rate must be between 0 and 1.")
        if o["compare_designs"]:
            return self.compare(project, o)
        summary = simulate_annotations(
            project=project, annotators=o["annotators"], judgements_per_pair=o["judgements_per_pair"],
            noise=o["noise"], seed=o["seed"], batch_ids=o["batch"], max_judgements=o["max_judgements"],
            calibrate=not o["no_calibration"], attention_fail_rate=o["attention_fail_rate"],
            progress=lambda f, m: self.stdout.write(f"  {f:5.1%} {m}") if f >= 1 or int(f * 100) % 10 == 0 else None,
        )
        for name, count in summary["batches"].items():
            self.stdout.write(f"{name}: {count} judgements")
        self.stdout.write(f"total {summary['judgements']} judgements by {', '.join(summary['annotators'])}")
        if summary["calibration"]:
            self.stdout.write(f"noise calibrated to {summary['calibration']['source']}")

    def compare(self, project, o):
        import numpy as np

        from annotation.services.simulation import _scales, latent_strengths, noise_calibration
        from annotation.stats.pair_selection import compare_designs

        batch = project.batches.filter(pk__in=o["batch"]) if o["batch"] else project.batches.all()
        batch = batch.order_by("pk").first()
        if batch is None:
            raise CommandError(f"Project {project.name!r} has no batch.")
        calibration = noise_calibration(project)
        strengths = latent_strengths(batch, np.random.default_rng(o["seed"]), calibration["agreement"], o["annotators"])
        theta = np.array(list(strengths.values()))
        scales = np.array(_scales(o["noise"], o["annotators"]))
        result = compare_designs(theta, annotator_scales=scales, seeds=o["compare_designs"], target=o["target"])
        ex = result["exhaustive"]
        self.stdout.write(f"{batch.name}: {len(theta)} candidates, {o['annotators']} simulated annotators, "
                          f"{o['compare_designs']} seed(s)")
        self.stdout.write(f"noise calibrated to {calibration['source']}")
        self.stdout.write(f"exhaustive: {ex['judgements']} judgements, ρ {ex['rho']:.3f} ± {ex['sd']:.3f}")
        for r, a in zip(result["random"], result["adaptive"]):
            self.stdout.write(f"{r['judgements']:>7} judgements: random ρ {r['rho']:.3f} ± {r['sd']:.3f}, "
                              f"adaptive ρ {a['rho']:.3f} ± {a['sd']:.3f}")
        for design, needed in result["needed"].items():
            self.stdout.write(f"{design}: ρ ≥ {o['target']} at {needed if needed else 'not within the budgets'}")
