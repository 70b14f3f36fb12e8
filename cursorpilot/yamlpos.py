"""YAML loading that remembers where every value came from, so errors can say line and column."""

from __future__ import annotations

from pathlib import Path

import yaml

from cursorpilot.errors import BadInput

Position = tuple[int, int]  # 1-based line, column


def load_with_positions(path: Path) -> tuple[object, dict[tuple, Position]]:
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
        raise BadInput(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    positions: dict[tuple, Position] = {}
    if node is None:
        return None, positions
    return _convert(node, (), positions), positions


def _convert(node: yaml.Node, path: tuple, positions: dict[tuple, Position]) -> object:
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = yaml.safe_load(yaml.serialize(key_node)) if not isinstance(key_node, yaml.ScalarNode) else key_node.value
            positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = _convert(value_node, (*path, key), positions)
            positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), positions) for i, item in enumerate(node.value)]
    return yaml.safe_load(yaml.serialize(node))


def where(positions: dict[tuple, Position], loc: tuple) -> str:
    """The position of the deepest known prefix of loc, as ':line:col'."""
    for n in range(len(loc), -1, -1):
        pos = positions.get(tuple(loc[:n]))
        if pos:
            return f":{pos[0]}:{pos[1]}"
    return ""
