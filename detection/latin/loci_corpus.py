"""Build the Loci Similes query and source corpora from the Tesserae texts in ``latin_texts/``.

Query corpus: Jerome, Lactantius, Valerius Flaccus. Source corpus: Cicero, Lucretius, Catullus, Virgil,
Horace, Tibullus, Propertius, Ovid, Lucan, Martial, Statius (seed 000, §3.1). Each work is read from its
``.tess`` file, joined and split into sentences; ids use the benchmark's citation prefixes
(``hier. epist. 130.5.5.3``, ``verg. aen. 2.774.1``). Writes ``query.csv`` and ``source.csv``
(``seg_id,text,author,work``) and returns per-author statistics for the paper's Table 1.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .analysis import latin_tokens
from .errors import InputError
from .normalize import has_latin_word
from .readers import ReadReport, read_tess
from .segment import Segment, segment_units

__all__ = ["WORKS", "PAPER_TABLE1", "AuthorStats", "CorpusStats", "build_corpus", "write_segments_csv",
           "format_table1"]

# file stem -> (side, author, benchmark citation prefix, verse?)
WORKS: dict[str, tuple[str, str, str, bool]] = {}


def _add(side: str, author: str, verse: bool, entries: dict[str, str]) -> None:
    for stem, prefix in entries.items():
        WORKS[stem] = (side, author, prefix, verse)


_add("query", "Jerome", False, {
    "jerome.epistulae": "hier. epist.",
    "jerome.in_hieremiam_prophetam": "hier. in ier.",
})
_add("query", "Lactantius", False, {
    "lactantius.divinarum_institutionum": "lact. inst.",
    "lactantius.epitome_divinarum_institutionum": "lact. epit.",
    "lactantius.de_ira_dei": "lact. ira",
    "lactantius.de_mortibus_persecutorum": "lact. mort. pers.",
    "lactantius.de_opificio_dei": "lact. opif.",
})
_add("query", "Lactantius", True, {
    "lactantius.de_ave_phoenice": "lact. phoen.",
    "lactantius.carmen_de_passione_domini": "lact. carm. pass.",
})
_add("query", "Valerius", True, {"valerius_flaccus.argonautica": "val. fl."})
_add("source", "Cicero", False, {
    "cicero.academica": "cic. ac.", "cicero.brutus": "cic. brut.", "cicero.cum_populo_gratias_egit": "cic. red. quir.",
    "cicero.de_amicitia": "cic. lael.", "cicero.de_divinatione": "cic. div.", "cicero.de_domo_sua": "cic. dom.",
    "cicero.de_fato": "cic. fat.", "cicero.de_finibus_bonorum_et_malorum": "cic. fin.",
    "cicero.de_haruspicum_responso": "cic. har. resp.", "cicero.de_imperio_cn_pompei": "cic. manil.",
    "cicero.de_inventione": "cic. inv.", "cicero.de_lege_agraria_contra_rullum": "cic. agr.",
    "cicero.de_natura_deorum": "cic. nat. deor.", "cicero.de_officiis": "cic. off.",
    "cicero.de_optimo_genere_oratorum": "cic. opt. gen.", "cicero.de_oratore": "cic. de orat.",
    "cicero.de_partitione_oratoria": "cic. part.", "cicero.de_provinciis_consularibus": "cic. prov.",
    "cicero.de_republica": "cic. rep.", "cicero.de_senectute": "cic. cato",
    "cicero.divinatio_in_c_verrem": "cic. verr.", "cicero.divinatio_in_q_caecilium": "cic. div. in caec.",
    "cicero.epistulae_ad_familiares": "cic. fam.", "cicero.in_catilinam": "cic. catil.",
    "cicero.in_l_pisonem": "cic. pis.", "cicero.in_vatinium": "cic. vatin.", "cicero.letters_to_atticus": "cic. att.",
    "cicero.letters_to_brutus": "cic. ad brut.", "cicero.letters_to_quintus": "cic. q. fr.",
    "cicero.lucullus": "cic. luc.", "cicero.orator": "cic. orat.", "cicero.paradoxa_stoicorum_ad_m_brutum": "cic. parad.",
    "cicero.philippicae": "cic. phil.", "cicero.post_reditum_in_senatu": "cic. red. sen.",
    "cicero.pro_a_caecina": "cic. caecin.", "cicero.pro_a_cluentio": "cic. cluent.", "cicero.pro_archia": "cic. arch.",
    "cicero.pro_balbo": "cic. balb.", "cicero.pro_c_rabirio_perduellionis_reo": "cic. rab. perd.",
    "cicero.pro_c_rabirio_postumo": "cic. rab. post.", "cicero.pro_fonteio": "cic. font.",
    "cicero.pro_l_flacco": "cic. flacc.", "cicero.pro_ligario": "cic. lig.", "cicero.pro_m_caelio": "cic. cael.",
    "cicero.pro_marcello": "cic. marcell.", "cicero.pro_milone": "cic. mil.", "cicero.pro_murena": "cic. mur.",
    "cicero.pro_plancio": "cic. planc.", "cicero.pro_publio_quinctio": "cic. quinct.",
    "cicero.pro_q_roscio_comoedo": "cic. q. rosc.", "cicero.pro_rege_deiotaro": "cic. deiot.",
    "cicero.pro_s_roscio": "cic. s.rosc.", "cicero.pro_scauro": "cic. scaur.", "cicero.pro_sestio": "cic. sest.",
    "cicero.pro_sulla": "cic. sull.", "cicero.pro_tullio": "cic. tull.", "cicero.timaeus": "cic. tim.",
    "cicero.topica": "cic. top.", "cicero.tusculanae_disputationes": "cic. tusc.",
})
_add("source", "Lucretius", True, {"lucretius.de_rerum_natura": "lucr."})
_add("source", "Catullus", True, {"catullus.carmina": "catull."})
_add("source", "Virgil", True, {"vergil.aeneid": "verg. aen.", "vergil.georgics": "verg. georg.",
                                "vergil.eclogues": "verg. ecl."})
_add("source", "Horace", True, {"horace.odes": "hor. carm.", "horace.carmen_saeculare": "hor. carm. saec.",
                                "horace.epistles": "hor. epist.", "horace.epodes": "hor. epod.",
                                "horace.satires": "hor. sat.", "horace.ars_poetica": "hor. ars."})
_add("source", "Tibullus", True, {"tibullus.elegies": "tib."})
_add("source", "Propertius", True, {"propertius.elegies": "prop."})
_add("source", "Ovid", True, {
    "ovid.amores": "ov. am.", "ovid.ars_amatoria": "ov. ars", "ovid.ex_ponto": "ov. pont.", "ovid.fasti": "ov. fast.",
    "ovid.heroides": "ov. her.", "ovid.ibis": "ov. ib.", "ovid.medicamina_faciei_femineae": "ov. medic.",
    "ovid.metamorphoses": "ov. met.", "ovid.remedia_amoris": "ov. rem.", "ovid.tristia": "ov. trist.",
})
_add("source", "Lucan", True, {"lucan.bellum_civile": "lucan."})
_add("source", "Martial", True, {"martial.epigrams": "mart."})
_add("source", "Statius", True, {"statius.thebaid": "stat. theb.", "statius.silvae": "stat. silv.",
                                 "statius.achilleid": "stat. achil."})

QUERY_AUTHORS = ["Jerome", "Lactantius", "Valerius"]
SOURCE_AUTHORS = ["Cicero", "Ovid", "Virgil", "Martial", "Lucan", "Statius", "Horace", "Propertius", "Lucretius",
                  "Catullus", "Tibullus"]

# seed 000, Table 1: segments, avg, min, max, std tokens
PAPER_TABLE1: dict[str, tuple[int, float, int, int, float]] = {
    "Jerome": (74672, 31.13, 1, 617, 22.32), "Lactantius": (8444, 28.53, 1, 369, 19.48),
    "Valerius": (2138, 29.60, 1, 145, 18.10), "Query total": (85254, 30.83, 1, 617, 21.97),
    "Cicero": (54331, 28.97, 1, 1377, 25.40), "Ovid": (14096, 26.51, 1, 432, 19.53),
    "Virgil": (4861, 29.65, 2, 353, 19.55), "Martial": (4114, 26.13, 2, 274, 21.07),
    "Lucan": (2952, 31.26, 2, 245, 21.83), "Statius": (2527, 44.08, 2, 412, 40.22),
    "Horace": (2353, 33.60, 2, 195, 24.83), "Propertius": (1889, 22.18, 2, 267, 17.56),
    "Lucretius": (1826, 40.95, 3, 256, 27.40), "Catullus": (809, 27.43, 2, 149, 22.08),
    "Tibullus": (788, 26.12, 2, 251, 20.70), "Source total": (90546, 29.17, 1, 1377, 24.61),
}


@dataclass
class AuthorStats:
    author: str
    segments: int = 0
    avg_tokens: float = 0.0
    min_tokens: int = 0
    max_tokens: int = 0
    std_tokens: float = 0.0

    @classmethod
    def from_lengths(cls, author: str, lengths: list[int]) -> "AuthorStats":
        if not lengths:
            return cls(author)
        n = len(lengths)
        mean = sum(lengths) / n
        var = sum((x - mean) ** 2 for x in lengths) / (n - 1) if n > 1 else 0.0
        return cls(author, n, mean, min(lengths), max(lengths), math.sqrt(var))


@dataclass
class CorpusStats:
    rows: list[AuthorStats] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    files: int = 0
    query_path: str = ""
    source_path: str = ""


def write_segments_csv(path, segments: list[Segment], *, extra: bool = True) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text", "author", "work"] if extra else ["seg_id", "text"])
        for s in segments:
            w.writerow([s.seg_id, s.text, s.author, s.work] if extra else [s.seg_id, s.text])
    os.replace(tmp, path)


def build_corpus(texts_dir, out_dir, progress: Callable[[float, str], None] | None = None,
                 *, works: dict[str, tuple[str, str, str, bool]] | None = None) -> CorpusStats:
    """Read every known ``.tess`` work under ``texts_dir`` (searched recursively), segment, write corpora.

    Segments without any word, segments without a single Latin-script word and duplicate ids are skipped and
    counted in ``CorpusStats.skipped`` (never dropped silently). A segment mixing Latin and Greek (Cicero's
    letters) is kept whole: its Latin words are indexed, its Greek words pass through the analyser unchanged.
    A missing work raises :class:`InputError`.
    """
    texts_dir = Path(texts_dir)
    works = WORKS if works is None else works
    found = {p.stem: p for p in texts_dir.rglob("*.tess")}
    missing = sorted(set(works) - set(found))
    if missing:
        raise InputError(f"missing .tess file(s): {', '.join(m + '.tess' for m in missing)}", path=texts_dir)
    report = ReadReport()
    side_segments: dict[str, list[Segment]] = {"query": [], "source": []}
    lengths: dict[str, list[int]] = {}
    seen: dict[str, str] = {}
    stems = sorted(works)
    for i, stem in enumerate(stems):
        side, author, prefix, verse = works[stem]
        path = found[stem]
        if progress:
            progress(i / len(stems), f"reading {path.name}")
        units = read_tess(path, report=report)
        line_of = {u.ref: u.line for u in units}
        for seg in segment_units(units, prefix, author=author, work=stem, verse=verse):
            ntok = len(latin_tokens(seg.text))  # the one analyser, as the retrievers count
            problem = _skip_reason(seg, ntok, seen)
            if problem:
                report.add(problem[0], InputError(problem[1], path=path, line=line_of.get(seg.ref.split("-")[0])))
                continue
            seen[seg.seg_id] = path.name
            side_segments[side].append(seg)
            lengths.setdefault(author, []).append(ntok)
    out_dir = Path(out_dir)
    stats = CorpusStats(files=len(stems), rows=_table1_rows(lengths), skipped=dict(report.skipped),
                        messages=list(report.messages), query_path=str(out_dir / "query.csv"),
                        source_path=str(out_dir / "source.csv"))
    write_segments_csv(stats.query_path, side_segments["query"])
    write_segments_csv(stats.source_path, side_segments["source"])
    if progress:
        progress(1.0, f"wrote {len(side_segments['query'])} query and {len(side_segments['source'])} source segments")
    return stats


def _skip_reason(seg: Segment, n_tokens: int, seen: dict[str, str]) -> tuple[str, str] | None:
    """(reason, message) when a segment is not written, else None."""
    if n_tokens == 0:
        return "no words", f"segment {seg.seg_id!r} has no words"
    if not has_latin_word(seg.text):
        return "no Latin word", f"segment {seg.seg_id!r} has no word in Latin script: {seg.text[:40]!r}"
    if seg.seg_id in seen:
        return "duplicate id", f"duplicate id {seg.seg_id!r} (also in {seen[seg.seg_id]})"
    return None


def _table1_rows(lengths: dict[str, list[int]]) -> list[AuthorStats]:
    """Token statistics per author and per side, in Table 1's order."""
    rows = []
    for label, authors in (("Query total", QUERY_AUTHORS), ("Source total", SOURCE_AUTHORS)):
        every: list[int] = []
        for a in authors:
            rows.append(AuthorStats.from_lengths(a, lengths.get(a, [])))
            every.extend(lengths.get(a, []))
        rows.append(AuthorStats.from_lengths(label, every))
    return rows


def format_table1(stats: CorpusStats) -> str:
    """Table 1 (ours beside the paper's) as aligned text."""
    head = f"{'Author':<13} {'Segments':>9} {'(paper)':>8} {'Avg':>6} {'(paper)':>7} {'Min':>4} {'Max':>5} {'(paper)':>7} {'Std':>6} {'(paper)':>7}"
    lines = [head, "-" * len(head)]
    for r in stats.rows:
        p = PAPER_TABLE1.get(r.author)
        ps = p if p else ("", "", "", "", "")
        lines.append(
            f"{r.author:<13} {r.segments:>9,} {ps[0]:>8,} {r.avg_tokens:>6.2f} {ps[1]:>7} {r.min_tokens:>4} "
            f"{r.max_tokens:>5,} {ps[3]:>7,} {r.std_tokens:>6.2f} {ps[4]:>7}"
            if p else
            f"{r.author:<13} {r.segments:>9,} {'':>8} {r.avg_tokens:>6.2f} {'':>7} {r.min_tokens:>4} {r.max_tokens:>5,}"
        )
    if stats.skipped:
        lines.append("skipped: " + ", ".join(f"{n} {k}" for k, n in sorted(stats.skipped.items())))
    else:
        lines.append("skipped: none")
    return "\n".join(lines)
