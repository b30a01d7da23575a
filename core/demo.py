"""Demo accounts created by `manage.py load_demo` (local use only; printed with their passwords)."""
from core.roles import ANNOTATOR, LEAD, RESEARCHER

DEMO_USERS = (
    # username, password, roles, staff
    ("lead", "lead-demo-pass", (LEAD, RESEARCHER), False),
    ("researcher", "researcher-demo-pass", (RESEARCHER,), False),
    ("annotator1", "annotator-demo-pass", (ANNOTATOR,), False),
    ("annotator2", "annotator-demo-pass", (ANNOTATOR,), False),
    ("annotator3", "annotator-demo-pass", (ANNOTATOR,), False),
    ("admin", "admin-demo-pass", (LEAD, RESEARCHER, ANNOTATOR), True),
)

# The README's first login: it leads the demo projects and owns the demo's benchmark runs and workbench
# detection, so its first visit to /jobs/, /benchmarks/ and /workbench/ shows them.
DEMO_OWNER = "lead"
