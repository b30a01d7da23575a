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
        if isinstance(data, dict):
            if "detail" in data:
                data = [data]
            else:
                data = [data]
        rows = list(data or [])
        view = (renderer_context or {}).get("view")
        columns = list(getattr(view, "csv_columns", None) or (rows[0].keys() if rows else []))
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
        return out.getvalue().encode(self.charset)
