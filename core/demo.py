"""Demo accounts created by `manage.py load_demo` (local use only; printed with their passwords and API tokens)."""
import hashlib
import hmac

from django.conf import settings

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


def demo_token(username: str) -> str:
    """The API key a demo user gets when `load_demo_users` creates it: derived from the site's SECRET_KEY, so
    `load_demo` prints the same working key at every start without any key being stored (only its digest is).
    Local-only demo credentials, like the passwords above: never load the demo on a site others can reach."""
    return hmac.new(settings.SECRET_KEY.encode(), f"similia demo API token: {username}".encode(),
                    hashlib.sha256).hexdigest()[:40]
