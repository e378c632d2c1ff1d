"""Where sentences start: the rules of NLTK's Punkt sentence tokenizer (3.9) when it has learnt nothing.

llama-index's `SentenceSplitter`, which Letta 0.16.8 chunked files with, finds sentences with
`PunktSentenceTokenizer()`: Punkt with empty parameters (no known abbreviations, collocations, sentence starters or
word-case statistics). Without those, its decisions come down to the few rules below, written here rather than
importing NLTK (whose newer releases also run every pattern through a slower guarded matcher).

A candidate break is a ``.``, ``?`` or ``!`` followed by other punctuation or by whitespace and a word. It is a
break when, among the words around it (the word it ends, the mark, what follows), some word ends a sentence and is
not the last one. A word ends a sentence when it is ``.``, ``?`` or ``!``, or ends in a single period, except:

- a single letter with a period (an initial, "J.") followed by punctuation or a word starting with a letter;
- a number with a period ("3.") followed by punctuation or a word starting with a lowercase letter.

So "Mr. Smith" and "e.g. this" break, "J. Bach" and "page 3. next" do not. A closing quote or bracket after the
break ("(Sent.) Next") stays with the sentence it closes.
"""

import re
from itertools import pairwise

_WORD_START = r"""[^("`{\[:;&#*@)}\]\-,]"""
_NON_WORD = r"""(?:[)";}\]*:@'({\[?!])"""
_MULTI_CHAR = r"(?:-{2,}|\.{2,}|(?:\.\s){2,}\.)"
# A word: multi-character punctuation; or a run starting with a word character up to whitespace, other
# punctuation or a comma that ends the word; or any one other character.
_WORD = re.compile(
    rf"{_MULTI_CHAR}|(?={_WORD_START})\S+?(?=\s|$|{_NON_WORD}|{_MULTI_CHAR}|,(?=$|\s|{_NON_WORD}|{_MULTI_CHAR}))|\S"
)
_CANDIDATE = re.compile(rf"[.?!](?=(?P<after>{_NON_WORD}|\s+(?P<next>\S+)))")
_CLOSING = re.compile(r"""["')\]}]+?(?:\s+|(?=--)|$)""", re.MULTILINE)
_ELLIPSIS = re.compile(r"\.\.+$")
_NUMBER = re.compile(r"^-?[.,]?\d[\d,.-]*\.?$")
_INITIAL = re.compile(r"[^\W\d]\.$")
_PUNCTUATION = frozenset(";:,.!?")
_WHITESPACE = " \t\n\r\x0b\x0c"  # Python's string.whitespace: the word before a candidate starts after one


def _ends_sentence(word: str, following: str) -> bool:
    if word in (".", "?", "!"):
        return True
    if not word.endswith(".") or word.endswith("..") or _ELLIPSIS.match(word):
        return False
    kind = _NUMBER.sub("##number##", word.lower())
    if len(kind) > 1 and kind.endswith("."):
        kind = kind[:-1]
    initial = _INITIAL.match(word) is not None
    if not initial and kind != "##number##":
        return True
    if following in _PUNCTUATION or following[0].islower():
        return False
    return not (initial and following[0].isupper())


def _has_break(context: str) -> bool:
    words = [word for line in context.split("\n") if line.strip() for word in _WORD.findall(line)]
    return any(_ends_sentence(word, following) for word, following in pairwise(words))


def _last_whitespace(text: str) -> int:
    return max(text.rfind(char) for char in _WHITESPACE)


def _candidates(text: str) -> list[tuple[re.Match[str], str]]:
    """Each candidate break with its context; a candidate right after another (no whitespace between, "?!")
    replaces it, its context reaching back to the start of the earlier one's word."""
    found: list[tuple[re.Match[str], str]] = []
    previous: re.Match[str] | None = None
    word_start, word_end = 0, 0
    for match in _CANDIDATE.finditer(text):
        space = _last_whitespace(text[word_end : match.start()])
        start = word_end + space + 1 if space > 0 else word_start
        if previous is not None and word_end <= start:
            found.append((previous, text[word_start:word_end] + previous.group() + previous.group("after")))
        previous, word_start, word_end = match, start, match.start()
    if previous is not None:
        found.append((previous, text[word_start:word_end] + previous.group() + previous.group("after")))
    return found


def _spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    last = 0
    for match, context in _candidates(text):
        if _has_break(context):
            spans.append((last, match.end()))
            last = match.start("next") if match.group("next") else match.end()
    spans.append((last, len(text.rstrip())))
    return spans


def sentence_starts(text: str) -> list[int]:
    """The offsets in `text` where its sentences start (none for blank text)."""
    starts: list[int] = []
    shift = 0
    spans = _spans(text)
    for (start, end), following in zip(spans, [*spans[1:], None], strict=True):
        start += shift
        closing = _CLOSING.match(text[following[0] : following[1]]) if following else None
        if closing:
            starts.append(start)
            shift = closing.end()
        else:
            shift = 0
            if start < end:
                starts.append(start)
    return starts
