"""Whether YAML reads a plain (unquoted) scalar as text, decided without importing YAML.

A write checks every value it puts in a file plain (an id, a date, a name): one that YAML would
read back as a bool, a null or a number is quoted instead. Asking the YAML library cost each
one-shot `memory-mcp remember` about 7 ms of import (bench_cli.py). These are YAML 1.1's implicit
types as the strict loader (strictyaml.py) resolves them, timestamps left out because it keeps them
as text; tests/truth/test_plainscalar.py holds this to the YAML library's own answer.
Standard library only.
"""

from __future__ import annotations

import re

_DIGITS = r"[0-9][0-9_]*"
_EXPONENT = r"(?:[eE][-+][0-9]+)?"
_SIXTIES = r"(?::[0-5]?[0-9])+"  # base 60: 1:30 is 90
# Anchored as YAML anchors them (`re.match` and `$`): a final line break is allowed after the value.
_NOT_TEXT = re.compile(
    # bools and nulls
    r"(?:[Yy]es|YES|[Nn]o|NO|[Tt]rue|TRUE|[Ff]alse|FALSE|[Oo]n|ON|[Oo]ff|OFF|[Nn]ull|NULL|~"
    # integers: binary, octal, decimal, hexadecimal, base 60
    rf"|[-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[1-9][0-9_]*{_SIXTIES})"
    # floats: with a point (and an exponent), base 60 with a point, infinities, not-a-number
    rf"|[-+]?{_DIGITS}\.[0-9_]*{_EXPONENT}|\.{_DIGITS}{_EXPONENT}|[-+]?{_DIGITS}{_SIXTIES}\.[0-9_]*"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    # the merge key, the value key and the indicators YAML's resolver names (never plain anyway)
    r"|<<|=|!|&|\*)$"
)


def reads_as_text(value: str) -> bool:
    """Whether YAML reads `value`, written as a plain scalar, as this string (not a bool, a null or a
    number). The empty scalar is a null."""
    return value != "" and _NOT_TEXT.match(value) is None
