"""griffe extensions for the website's API reference (mkdocs.yml).

`ExampleSections`: tfm's `Example:` sections are examples. griffe's Google-style parser knows the section
`Examples:` only; an `Example:` section became an admonition whose `>>> ...` lines Markdown read as nested
quotes (a `>>> # comment` even as a heading). Renamed before parsing, they are doctest code blocks.

`DocumentOnce`: every object is documented once, in the module that defines it. A package's `__init__.py`
that imports names of the package into its `__all__` (`tfm.config`, `tfm.layers`, ...) would otherwise
document each of them a second time, under a second anchor and a second search entry (the first search
hit for "beam search" was such a copy). Those aliases are marked not public, so the re-exporting module's
section leaves them out. tests/test_site.py checks that every object appears once and none is lost.
"""

import re

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)


class DocumentOnce(griffe.Extension):
    def on_package(self, *, pkg, **kwargs):
        modules = [pkg]
        while modules:
            module = modules.pop()
            modules.extend(module.modules.values())
            for member in module.members.values():
                if member.is_alias and member.target_path.startswith(pkg.path + "."):
                    member.public = False  # documented where it is defined
