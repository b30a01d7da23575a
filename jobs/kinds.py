"""Built-in job kinds used for diagnostics and tests of the job system itself."""
import os
import time

from jobs.registry import job_kind


@job_kind("system.sleep", queue="cpu", description="Sleep in steps, reporting progress (diagnostics).")
def sleep_job(job, *, seconds: float = 1.0, steps: int = 10, fail: bool = False, crash: bool = False) -> dict:
    """Wait `seconds` in `steps`; `fail` raises at the end, `crash` kills the worker process."""
    for step in range(steps):
        time.sleep(seconds / steps)
        job.progress((step + 1) / steps, f"step {step + 1} of {steps}")
    if crash:
        os._exit(137)
    if fail:
        raise RuntimeError("asked to fail")
    job.log(f"slept {seconds} s in {steps} steps (pid {os.getpid()})")
    return {"slept": seconds, "pid": os.getpid()}
