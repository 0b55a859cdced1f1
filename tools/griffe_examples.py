"""A griffe extension for the website's API reference (mkdocs.yml): tfm's `Example:` sections are examples.

griffe's Google-style parser knows the section `Examples:` only; an `Example:` section became an
admonition whose `>>> ...` lines Markdown read as nested quotes (a `>>> # comment` even as a heading).
Renamed before parsing, they are doctest code blocks.
"""

import re

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
