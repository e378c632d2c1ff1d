"""Where file text breaks into sentences for chunking: NLTK Punkt's untrained rules, as llama-index's
SentenceSplitter (and so Letta 0.16.8) used them. Expected sentences are those NLTK 3.9.1's
`PunktSentenceTokenizer().span_tokenize` gives for the same texts."""

from memlet.folders.sentences import sentence_starts


def sentences(text: str) -> list[str]:
    starts = sentence_starts(text)
    return [text[start:end].rstrip() for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]


def test_abbreviations_break_but_initials_and_numbers_before_lowercase_do_not() -> None:
    text = (
        "Mr. Smith went home. J. Bach wrote it. See page 3. then stop. Why? Yes!! (Done.) Next one... and more. "
        "e.g. this. A. 5 ends."
    )
    assert sentences(text) == [
        "Mr.",
        "Smith went home.",
        "J. Bach wrote it.",
        "See page 3. then stop.",
        "Why?",
        "Yes!!",
        "(Done.)",
        "Next one... and more.",
        "e.g.",
        "this.",
        "A.",
        "5 ends.",
    ]


def test_closing_quotes_stay_with_their_sentence_and_leading_space_with_the_first() -> None:
    text = '  Leading space. "Quoted end." Then -- more. U.S. Army. Fin.  '
    assert sentences(text) == ["  Leading space.", '"Quoted end."', "Then -- more.", "U.S.", "Army.", "Fin."]


def test_blank_text_has_no_sentence() -> None:
    assert sentence_starts("") == sentence_starts(" \n ") == []
