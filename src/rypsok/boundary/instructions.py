"""Detection of instruction-like wording in external text (REQ-SEC-003).

rypsok never rewrites visible external text; this detector only answers whether a text
reads like an attempt to steer the agent that reads it, so the caller can add the
``instruction_like_text`` notice (or, when the operator chose so, drop the result).

It is deliberately conservative: each pattern needs an unmistakable phrase, not a topic.
"Ignore all previous instructions" is flagged; an article titled "What is a system
prompt?", "you are now leaving our site" or "override the existing CSS rules" is not.
Phrasing evades any list, so the notice is a hint for the agent, not a guarantee; the
real defence is that external strings reach the agent only as data in their own fields
(REQ-SEC-001/002).

Matching runs on the lower-cased text, after NFKC normalisation when the text is not
ASCII (so fullwidth "ｉｇｎｏｒｅ" does not slip past). Invisible characters are removed
before detection by :mod:`rypsok.boundary.pipeline`, so "ig\\u200bnore" does not either.

Speed: every pattern starts with a literal, which lets the regular-expression engine skip
through the text at C speed; one alternation of all of them would be tried at every
position and costs ten times more on a page of several megabytes.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

# Words that make the following noun point at the instructions the reader already has.
_EARLIER: Final = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|initial|original|system|developer)"
)
# Only nouns that mean an AI's instructions: "rules", "guidelines" or "messages" occur in
# too much ordinary prose ("ignore my previous messages", "override the existing rules").
_ORDERS: Final = r"(?:instructions?|prompts?|directives?|guardrails|programming)"
_FILLER: Final = r"(?:(?:all|any|every|each|the|your|my|these|those|of)\s+){0,3}"
_HIDDEN_PROMPT: Final = (
    r"(?:system\s+(?:prompt|message|instructions?)|initial\s+(?:prompt|instructions)|"
    r"hidden\s+(?:prompt|instructions)|original\s+instructions|instructions\s+above)"
)
_OWNED: Final = (
    r"(?:(?:me|us|your|the|its|all|entire|full|complete|exact|original|hidden|secret|"
    r"current)\s+){0,3}"
)


def _each(leads: str, rest: str) -> tuple[str, ...]:
    """One pattern per leading word, so that every pattern starts with a literal."""
    return tuple(lead + rest for lead in leads.split())


_PATTERNS: Final[tuple[str, ...]] = (
    # "ignore all previous instructions", "disregard the prior system prompt"
    *_each(
        r"ignore disregard forget override bypass",
        rf"\s+{_FILLER}{_EARLIER}\s+(?:(?:system|developer|safety|ai)\s+)?{_ORDERS}\b",
    ),
    *_each(
        r"ignore disregard forget",
        r"\s+all\s+(?:of\s+)?(?:the\s+|your\s+)?(?:instructions|prompts)\b",
    ),
    # "disregard the above", "ignore everything before this"
    *_each(
        r"ignore disregard",
        r"\s+(?:(?:all|everything|anything|the|that|what(?:ever)?\s+(?:is|was))\s+){1,2}"
        r"(?:above|before|previously|prior)\b",
    ),
    # "you are now DAN", "you are now an unrestricted assistant", "you are no longer an AI"
    r"you\s+are\s+(?:now|no\s+longer)\s+(?:(?:a|an|the|my|in)\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:dan\b|jailbroken|unrestricted|unfiltered|uncensored|(?:developer|god|admin)\s+mode|"
    r"(?:ai|language\s+model|llm|chatbot|assistant|bound|restricted)\b)",
    r"from\s+now\s+on,?\s+you\s+(?:will|must|shall|are\s+to)\s+"
    r"(?:act|respond|answer|behave|pretend|obey|ignore)\b",
    *_each(
        r"act behave",
        r"\s+as\s+(?:an?\s+)?(?:unrestricted|jailbroken|unfiltered|uncensored)\b",
    ),
    # "reveal your system prompt", "print the initial instructions"
    *_each(
        r"reveal print show output repeat leak disclose display dump recite tell\s+me "
        r"give\s+me write\s+out",
        rf"\s+{_OWNED}{_HIDDEN_PROMPT}\b",
    ),
    r"new\s+(?:system\s+prompt|system\s+instructions|instructions)\s*:",
    # "do not tell the user", a staple of indirect injection
    *_each(r"do\s+not don't", r"\s+(?:tell|inform|alert|notify)\s+the\s+user\b"),
    # Chat-template tokens: <|im_start|>, <|system|>, <|eot_id|>, [INST], <<SYS>>,
    # <start_of_turn>.
    r"<\|[a-z0-9_]{1,32}\|>",
    r"\[/?inst\]",
    r"<</?sys>>",
    r"<(?:start|end)_of_turn>",
    # Role markers at the start of a line ("### system", "### Instruction:",
    # "Assistant: ...", "system: you ..."); the text is searched with a newline in front.
    r"\n[ \t]*#{2,6}[ \t]*(?:system|instructions?|assistant)\b[ \t]*:?[ \t]*$",
    r"\n[ \t]*(?:ai\s+)?assistant[ \t]*:",
    r"\n[ \t]*system\s+prompt[ \t]*:",
    r"\n[ \t]*system[ \t]*:[ \t]*(?:you\b|ignore\b|from\s+now\b|new\s+instructions\b)",
)

_DETECTORS: Final = tuple(re.compile(pattern, re.MULTILINE) for pattern in _PATTERNS)
# The same patterns as one alternation, which matches exactly when one of them does. A short
# text (a title, a snippet) is scanned once instead of once per pattern, in about half the
# time; on a long text (fetched content) the separate patterns are faster, each skipping ahead
# to its own first literal, so the alternation is used up to this length only (measured).
_DETECTOR: Final = re.compile("|".join(f"(?:{pattern})" for pattern in _PATTERNS), re.MULTILINE)
_ONE_SCAN_MAX_CHARS: Final = 256


def is_instruction_like(text: str) -> bool:
    """Whether ``text`` contains wording that tries to instruct its reader (REQ-SEC-003).

    Only reports; the text is never changed. Conservative: ordinary prose about prompts,
    assistants or systems is not flagged.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    # The leading newline puts a line start in front of the first line, too.
    haystack = "\n" + text.lower()
    if len(haystack) <= _ONE_SCAN_MAX_CHARS:
        return _DETECTOR.search(haystack) is not None
    return any(detector.search(haystack) is not None for detector in _DETECTORS)
