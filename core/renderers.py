"""CSV output for DRF views: a list of flat dicts becomes a CSV with a header row."""
import csv
import io

from rest_framework.renderers import BaseRenderer


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "results" in data:
            data = data["results"]
        view = (renderer_context or {}).get("view")
        columns = None
        if isinstance(data, dict):
            if "detail" in data:  # an error: say so instead of an empty table
                columns = ["detail"]
            data = [data]
        rows = list(data or [])
        columns = columns or list(getattr(view, "csv_columns", None) or (rows[0].keys() if rows else []))
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in columns})
        return out.getvalue().encode(self.charset)


def _cell(value):
    """Empty for None; text that a spreadsheet would run as a formula gets a leading apostrophe."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") and not _numeric(value):
        return "'" + value
    return value


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
