"""The Latin Library cleaning on real files of the archive (title, navigation, numbers and markup removed; the
Latin kept, first line to last)."""
from detection.latin.library_text import NAVIGATION, clean_line, clean_page, is_navigation


def _page(folder, name):
    return (folder / name).read_text(encoding="utf-8")


def test_confessions_page_keeps_the_latin_and_drops_the_page(latin_library_slice):
    raw = _page(latin_library_slice, "augustine/conf1.txt")
    lines = clean_page(raw)
    assert raw.splitlines()[0].strip() == "Augustine: Confessions I"
    assert lines[0] == "AUGUSTINI CONFESSIONUM LIBER PRIMUS"  # the title line is gone, the book's heading stays
    assert lines[1].startswith("magnus es, domine, et laudabilis valde.")
    assert "1.1.1" not in lines and "2.2.2" not in lines  # section numbers alone on a line
    assert not any(nav in ln.lower() for ln in lines for nav in NAVIGATION)
    assert lines[-1] == [ln.strip() for ln in raw.splitlines() if len(ln.split()) > 6][-1]
    assert "Augustine" not in lines  # the footer's author link
    # every Latin word of the body is kept: the raw page minus title, footer and numbers
    kept = sum(len(ln.split()) for ln in lines)
    body = [ln for ln in raw.splitlines()[1:] if len(ln.split()) > 6]
    assert kept >= sum(len(ln.split()) for ln in body)


def test_ammianus_table_of_contents_and_footer_go(latin_library_slice):
    lines = clean_page(_page(latin_library_slice, "ammianus/14.txt"))
    assert lines[0] == "AMMIANI MARCELLINI HISTORIAE LIBER XIV"
    assert not {"I", "II", "III", "IV", "V", "VI", "VII"} & set(lines)
    assert "Ammianus" not in lines and not any(is_navigation(ln) for ln in lines)
    raw_words = len(_page(latin_library_slice, "ammianus/14.txt").split())
    assert raw_words - 30 < sum(len(ln.split()) for ln in lines) < raw_words  # title, contents, footer only


def test_twelve_tables_brackets_and_run_together_footer(latin_library_slice):
    raw = _page(latin_library_slice, "12tables.txt")
    assert "The Latin Library The Classics Page" in raw.splitlines()[-1]
    lines = clean_page(raw)
    assert "DUODECIM TABULARUM LEGES" == lines[0] and "TABULA I" in lines
    assert "Si servo furtum faxit noxiamve noxit." in lines  # no<x>it: the editor's brackets go, the letter stays
    assert lines[-1].endswith("fructus duplione")
    assert not any("Library" in ln or "Ius Romanum" in ln for ln in lines)


def test_line_rules():
    assert clean_line("multa quoque et bello passus, dum conderet urbem,    5 ") == \
        "multa quoque et bello passus, dum conderet urbem,"
    assert clean_line("[ 161] Quibus ex rebus breviter disputatis") == "Quibus ex rebus breviter disputatis"
    assert clean_line(" 1 \t 2 \t 3 \t 4 ") == "" and clean_line("1.1.1") == "" and clean_line("IV") == ""
    assert clean_line("\t Ius Romanum The Latin Library The Classics Page") == ""
    assert clean_line("Contemporary Latin The Latin Library The Classics Homepage") == ""
    # a Latin sentence that names the site stays (more than an author's name is left)
    assert clean_line("de bibliotheca quam The Latin Library vocant multa legimus hodie")
    assert clean_page("") == [] and clean_page("\n \n") == []
