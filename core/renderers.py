"""CSV output for DRF views: a list of flat dicts becomes a CSV with a header row.

MACHINE CSV (byte-faithful) by default; `?csv=spreadsheet` gives SPREADSHEET CSV with formulas
neutralised (the dashboard's download links use it). See core.csv_export."""
from rest_framework.renderers import BaseRenderer

from core.csv_export import MACHINE, MODES, csv_text

#: The query parameter choosing the CSV mode.
CSV_MODE_PARAM = "csv"


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "results" in data:
            data = data["results"]
        view = (renderer_context or {}).get("view")
        request = (renderer_context or {}).get("request")
        columns = None
        if isinstance(data, dict):
            if "detail" in data:  # an error: say so instead of an empty table
                columns = ["detail"]
            data = [data]
        rows = list(data or [])
        columns = columns or list(getattr(view, "csv_columns", None) or (rows[0].keys() if rows else []))
        mode = request.query_params.get(CSV_MODE_PARAM, MACHINE) if request is not None else MACHINE
        if mode not in MODES:
            mode = MACHINE
        return csv_text(columns, rows, mode=mode).encode(self.charset)
