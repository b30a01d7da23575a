"""Server-rendered annotation pages, one module per page area (URLs in `annotation/page_urls.py`).

- `annotator.py`  the annotator's page.
- `projects.py`   the lead's project list, project creation and a project's page (members, verses, batches).
- `lead.py`       what a lead does without the admin site: settings, accounts, invitations, member removal,
                  attention checks.
- `dashboard.py`  the results dashboard (last `annotation.analytics` result, charts, recompute).
- `planning.py`   budget planning by simulation (the `annotation.plan` job).
- `access.py`     the access check the lead's pages share.
"""
