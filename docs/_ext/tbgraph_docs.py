"""Directives this documentation site uses to describe the tool with the tool itself.

* ``.. cli-reference::`` writes the CLI reference from :func:`graphviz_tb.cli.build_parser`,
  so the page can never disagree with ``tbgraph --help``.
* ``.. sample-gallery::`` draws every sample listed in ``samples/MANIFEST.json`` with the
  ``tbgraph`` directive, static and interactive, so a new sample appears without editing a page.
* ``.. tbgraph-command:: tbgraph shapes samples/x.pb ...`` runs the CLI in-process and shows
  what it prints, so the examples in the prose are real output of this version.

These are for this site only (they know where the samples and the repository are); the
directive users get is :mod:`graphviz_tb.sphinx`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

__all__ = ["setup"]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- CLI reference


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    # argparse keeps subparsers only on its private action class; there is no public accessor.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _invocation(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    # The same text ``--help`` shows in its left column, e.g. "-o FILE, --output FILE".
    return formatter._format_action_invocation(action)


def _action_item(action: argparse.Action, formatter: argparse.HelpFormatter) -> nodes.Node:
    item = nodes.definition_list_item()
    item += nodes.term("", "", nodes.literal(text=_invocation(action, formatter)))
    body = nodes.definition()
    help_text = (action.help or "").replace("%(default)s", str(action.default))
    if help_text:
        body += nodes.paragraph(text=help_text)
    facts = []
    if action.choices is not None and not isinstance(action.choices, dict):
        facts.append("one of: " + ", ".join(str(c) for c in action.choices))
    if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
        facts.append(f"default: {action.default}")
    if facts:
        body += nodes.paragraph(text="; ".join(facts) + ".")
    item += body
    return item


def _groups(parser: argparse.ArgumentParser) -> list[tuple[str, list[argparse.Action]]]:
    groups = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
        if actions:
            groups.append((group.title or "arguments", actions))
    return groups


class CliReference(SphinxDirective):
    """``.. cli-reference::``: one section per ``tbgraph`` command, from the real parser."""

    def _section(self, title: str, ident: str) -> nodes.section:
        section = nodes.section(ids=[ident], names=[ident])
        section += nodes.title(text=title)
        self.state.document.note_implicit_target(section)
        return section

    @staticmethod
    def _body(parser: argparse.ArgumentParser) -> list[nodes.Node]:
        """Usage, description, each argument group as a list, then the examples."""
        body: list[nodes.Node] = [
            nodes.literal_block(text=parser.format_usage().strip(), language="none")]
        if parser.description:
            body += [nodes.paragraph(text=" ".join(para.split()))
                     for para in re.split(r"\n\s*\n", parser.description.strip())]
        formatter = parser._get_formatter()
        for title, actions in _groups(parser):
            body.append(nodes.rubric(text=title[:1].upper() + title[1:]))
            listing = nodes.definition_list()
            listing.extend(_action_item(a, formatter) for a in actions)
            body.append(listing)
        if parser.epilog:
            body.append(nodes.literal_block(text=parser.epilog.strip(), language="none"))
        return body

    def run(self) -> list[nodes.Node]:
        from graphviz_tb.cli import build_parser, common, render, shapes

        # Read the page again whenever the parser (or this generator) changes.
        for module in (common, render, shapes):
            self.env.note_dependency(str(module.__file__))
        self.env.note_dependency(__file__)
        parser = build_parser()
        sections = []
        for name, sub in _subcommands(parser).items():
            section = self._section(f"tbgraph {name}", f"cli-{name}")
            section.extend(self._body(sub))
            sections.append(section)
        return [*self._body(parser), *sections]


# --------------------------------------------------------------------------- gallery


def _escape_rst(text: str) -> str:
    return re.sub(r"([\\`*_|])", r"\\\1", text)


class SampleGallery(SphinxDirective):
    """``.. sample-gallery::``: every sample of the manifest, drawn twice (svg, then html)."""

    def run(self) -> list[nodes.Node]:
        samples = Path(self.config.tbgraph_docs_samples)
        manifest = samples / "MANIFEST.json"
        self.env.note_dependency(str(manifest))
        doc_dir = Path(self.env.doc2path(self.env.docname)).parent
        lines: list[str] = []
        for sample in json.loads(manifest.read_text())["samples"]:
            path = samples.parent / sample["path"]
            rel = os.path.relpath(path, doc_dir)
            title = sample["path"].removeprefix("samples/")
            nodes_count = sample.get("nodes")
            facts = f"{nodes_count:,} top-level nodes. " if isinstance(nodes_count, int) else ""
            lines += [
                title, "-" * len(title), "",
                f"{_escape_rst(sample.get('source', ''))}. {facts}Drawn with the defaults "
                f"(``tbgraph render {sample['path']}``).", "",
                f".. tbgraph:: {rel}", f"   :alt: {sample['name']}, static", "",
                "The interactive viewer of the same graph: click a group to open it, search "
                "with :kbd:`/`, select an op and press *inputs* to trace where its data comes "
                "from.", "",
                f".. tbgraph:: {rel}", "   :format: html", "   :height: 480px",
                f"   :alt: {sample['name']}, interactive", "",
            ]
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(lines, source=str(manifest)), self.content_offset,
                                container, match_titles=True)
        return list(container.children)


# --------------------------------------------------------------------------- command output


class TbgraphCommand(SphinxDirective):
    """``.. tbgraph-command:: tbgraph ARGS``: the command and what it prints, run now.

    Paths in ARGS are read from the repository root (``tbgraph_docs_root``), as a reader who
    cloned it would type them.  ``:returncode:`` states the exit status the example expects;
    any other status is a build warning, so a changed behaviour cannot slip into the docs.
    """

    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {"returncode": directives.nonnegative_int}

    def run(self) -> list[nodes.Node]:
        from graphviz_tb.cli import main

        words = shlex.split(self.arguments[0])
        if words[:1] != ["tbgraph"]:
            raise self.error("the command must start with 'tbgraph'")
        root = Path(self.config.tbgraph_docs_root)
        argv = []
        for word in words[1:]:
            path = root / word
            if not word.startswith("-") and path.exists():
                self.env.note_dependency(str(path))
                word = str(path)
            argv.append(word)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = main(argv)
        expected = self.options.get("returncode", 0)
        if status != expected:
            logger.warning("%s exited with %d, expected %d:\n%s", self.arguments[0], status,
                           expected, out.getvalue(), location=self.get_location())
        text = out.getvalue().replace(f"{root}{os.sep}", "").rstrip()
        block = nodes.literal_block(text=f"$ {self.arguments[0]}\n{text}", language="console")
        self.set_source_info(block)
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("tbgraph_docs_samples", "", "env", types=frozenset({str}))
    app.add_config_value("tbgraph_docs_root", "", "env", types=frozenset({str}))
    app.add_directive("cli-reference", CliReference)
    app.add_directive("sample-gallery", SampleGallery)
    app.add_directive("tbgraph-command", TbgraphCommand)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
