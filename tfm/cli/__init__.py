"""The `tfm` command: train | translate | evaluate | export | average | demo.

    commands.py   the parser and one handler per subcommand (`main`)
    arguments.py  each subcommand's arguments and their types (no TensorFlow: `--help` answers at once)
    exits.py      how a command ends: exit statuses (130 Ctrl-C, 143 SIGTERM), one line for a file error
    demo.py       `tfm demo` / `make demo`: train, average, evaluate, translate and export on the numbers task

Example:
    >>> from tfm.cli import build_parser
    >>> build_parser().parse_args(["translate", "--run", "runs/x", "one two"]).command
    'translate'
"""

from tfm.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
