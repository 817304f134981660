"""The YAML of memory files, strictly: timestamps stay strings, aliases and tags that would not survive
JSON or a rewrite are refused. Apart from files.py so that a command that parses no file (a recall
over a settled store) does not import YAML: files.py imports this module where it reads or writes."""

from __future__ import annotations

import yaml

YAMLError = yaml.YAMLError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings and refuses aliases."""

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in memory files", event.start_mark
            )
        return super().compose_node(parent, index)


def _refuse_tag(loader: yaml.SafeLoader, node: yaml.Node) -> None:
    raise yaml.constructor.ConstructorError(None, None, f"the YAML tag {node.tag} is not allowed here",
                                            node.start_mark)


# Values that are not plain text, numbers, lists or mappings would not survive JSON or a rewrite.
for _tag in ("binary", "set", "omap", "pairs"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)

_StrictLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load(text: str) -> object:
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def dump(data: dict[str, object], allow_unicode: bool) -> str:
    """`data` as block YAML in its own key order, on lines of any length."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=allow_unicode, default_flow_style=False, width=10**6)
