"""CSV output for DRF views: a list of flat dicts becomes a CSV with a header row.

MACHINE CSV (byte-faithful) by default; `?csv=spreadsheet` gives SPREADSHEET CSV with formulas
neutralised (the dashboard's download links use it). See core.csv_export."""
from rest_framework.renderers import BaseRenderer

from core.csv_export import MACHINE, MODES, csv_text

#: The query parameter choosing the CSV mode.
CSV_MODE_PARAM = "csv"


def _error_text(data) -> str:
    """DRF's error body as one readable line: `detail`, or `field: message; …` for a validation error."""
    if isinstance(data, dict):
        if set(data) == {"detail"}:
            return _error_text(data["detail"])
        return "; ".join(f"{key}: {_error_text(value)}" for key, value in data.items())
    if isinstance(data, (list, tuple)):
        return " ".join(_error_text(item) for item in data)
    return str(data)


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "results" in data:
            data = data["results"]
        view = (renderer_context or {}).get("view")
        request = (renderer_context or {}).get("request")
        response = (renderer_context or {}).get("response")
        columns = None
        if response is not None and response.status_code >= 400:
            # an error asked for as CSV: one `detail` cell saying what is wrong (never the view's empty table)
            columns, data = ["detail"], [{"detail": _error_text(data)}]
        elif isinstance(data, dict):
            if "detail" in data:  # an error: say so instead of an empty table
                columns = ["detail"]
            data = [data]
        rows = list(data or [])
        columns = columns or list(getattr(view, "csv_columns", None) or (rows[0].keys() if rows else []))
        mode = request.query_params.get(CSV_MODE_PARAM, MACHINE) if request is not None else MACHINE
        if mode not in MODES:
            mode = MACHINE
        return csv_text(columns, rows, mode=mode).encode(self.charset)


def csv_mode(request) -> str:
    """The CSV mode a request asks for with `?csv=` (MACHINE when absent); 400 naming the choices otherwise.
    For views that write their CSV themselves, so `?csv=spreadsheet` means the same everywhere in the API."""
    from core.params import query_choice

    return query_choice(request.query_params, CSV_MODE_PARAM, MODES, default=MACHINE)
