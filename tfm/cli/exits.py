"""How a `tfm` command ends: exit statuses, SIGTERM as an interrupt, one line for a file error.

    EXIT_INTERRUPTED     130, as a shell reports Ctrl-C (128 + SIGINT)
    EXIT_TERMINATED      143 (128 + SIGTERM)
    Terminated           SIGTERM raised where Ctrl-C's KeyboardInterrupt would be
    stopped_by, exit_status   the words and the status for either stop
    describe_os_error, file_error   one line naming the file and the cause, instead of a traceback

Example:
    >>> exit_status(Terminated(15)), stopped_by(KeyboardInterrupt())
    (143, 'interrupted')
"""

import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be, so both stop a command the same way.

    Example:
        >>> isinstance(Terminated(15), KeyboardInterrupt)
        True
    """


def terminate_on_sigterm(signum, frame):
    """A SIGTERM handler (`signal.signal(signal.SIGTERM, terminate_on_sigterm)`): raises `Terminated`.

    Example:
        >>> try:
        ...     terminate_on_sigterm(15, None)
        ... except Terminated as stop:
        ...     stop.args
        (15,)
    """
    raise Terminated(signum)


def stopped_by(stop):
    """The words for a stop, after "tfm COMMAND: ".

    Args:
        stop: the KeyboardInterrupt (Ctrl-C) or `Terminated` (SIGTERM) that stopped the command.

    Example:
        >>> stopped_by(Terminated(15)), stopped_by(KeyboardInterrupt())
        ('stopped by SIGTERM', 'interrupted')
    """
    return "stopped by SIGTERM" if isinstance(stop, Terminated) else "interrupted"


def exit_status(stop):
    """The exit status for a stop: 143 for SIGTERM, 130 for Ctrl-C, as a shell reports them.

    Example:
        >>> exit_status(Terminated(15)) == EXIT_TERMINATED, exit_status(KeyboardInterrupt()) == EXIT_INTERRUPTED
        (True, True)
    """
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def describe_os_error(error):
    """One line for an OSError: tfm's own name the file and the cause; the rest get it from `tfm.runs.cause`.

    Example:
        >>> import errno
        >>> describe_os_error(PermissionError(errno.EACCES, "Permission denied", "runs/x/config.json"))
        'runs/x/config.json: permission denied (EACCES)'
    """
    from tfm.runs import cause

    if type(error).__str__ is not OSError.__str__ or error.errno is None:
        return str(error)  # tfm's own (WriteError, RunInUseError ...), or a message without an errno
    where = error.filename if error.filename is not None else ""
    where += f" -> {error.filename2}" if error.filename2 is not None else ""
    return f"{where}: {cause(error)}" if where else cause(error)


def file_error(error):
    """One line for a TensorFlow error about a file that cannot be written (a SavedModel, a TensorBoard log), or
    None for any other error (an out-of-memory error, a bug: its traceback stays).

    Example:
        >>> file_error(ValueError("not TensorFlow's")) is None
        True
    """
    tf = sys.modules.get("tensorflow")
    if tf is None or not isinstance(error, tf.errors.OpError):
        return None
    if not isinstance(error, tf.errors.PermissionDeniedError) and not any(
            text in error.message for text in ("Read-only file system", "No space left", "File too large",
                                               "Disk quota exceeded")):
        return None  # not about a file (an out-of-memory ResourceExhaustedError, a bug): the traceback stays
    line = error.message.strip().splitlines()[0] if error.message.strip() else type(error).__name__
    line = line.split("}} ", 1)[-1]  # "{{function_node ...}} PATH; Read-only file system"
    return f"cannot write {line.replace('; ', ': ', 1)}"
