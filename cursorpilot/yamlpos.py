"""YAML loading that remembers where every value came from, so errors can say line and column."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path

import yaml
from pydantic import ValidationError

from cursorpilot.errors import BadInput

Position = tuple[int, int]  # 1-based line, column


def load_with_positions(path: Path, *, hint: str = "", text_scalars: bool = False) -> tuple[object, dict[tuple, Position]]:
    """hint ends every error line (the expected shape, in one line). text_scalars keeps `yes`, `1`, `on` as the text
    written, for files whose values are all text (rules: `reply: yes` means y-e-s, not True)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: file not found") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise BadInput(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}{hint}") from None
    positions: dict[tuple, Position] = {}
    if node is None:
        return None, positions
    return _convert(node, (), positions, text_scalars), positions


def _convert(node: yaml.Node, path: tuple, positions: dict[tuple, Position], text_scalars: bool = False) -> object:
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = yaml.safe_load(yaml.serialize(key_node)) if not isinstance(key_node, yaml.ScalarNode) else key_node.value
            positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = _convert(value_node, (*path, key), positions, text_scalars)
            positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), positions, text_scalars) for i, item in enumerate(node.value)]
    value = yaml.safe_load(yaml.serialize(node))
    if text_scalars and isinstance(value, (bool, int, float)):
        return node.value
    return value


def where(positions: dict[tuple, Position], loc: tuple) -> str:
    """The position of the deepest known prefix of loc, as ':line:col'."""
    for n in range(len(loc), -1, -1):
        pos = positions.get(tuple(loc[:n]))
        if pos:
            return f":{pos[0]}:{pos[1]}"
    return ""


def explain(exc: ValidationError, positions: dict[tuple, Position], fields: Iterable[str], prefix: tuple = ()) -> tuple[str, tuple]:
    """The first error a person should fix, in words, and where it is. A key typo (`mtch`) is named before the
    `match` it leaves missing, with the key it probably meant."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = (*prefix, *(p for p in err["loc"] if not (isinstance(p, str) and "[" in p)))  # drop pydantic's validator names
    key = loc[-1] if loc else None
    if err["type"] == "extra_forbidden":
        close = get_close_matches(str(key), list(fields), n=1)
        return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(fields)})"), loc
    if err["type"] == "missing":
        return f"missing key {key!r}", loc[:-1]
    msg = err["msg"].removeprefix("Value error, ")
    return (f"{key}: {msg}" if isinstance(key, str) else msg), loc
