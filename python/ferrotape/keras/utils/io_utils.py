"""Where Keras's progress output goes (Keras 3's ``keras.src.utils.io_utils``): with interactive
logging on (the default) progress bars draw live and lines are printed; off, no live bar is
drawn and each line goes to the ``ferrotape`` logger at INFO level instead (Keras sends them
to absl logging), which suits jobs whose output is collected by a logging system.

>>> is_interactive_logging_enabled()
True
"""

import logging

_state = {"interactive_logging": True}
_logger = logging.getLogger("ferrotape")


def enable_interactive_logging():
    """Turns interactive logging on: progress bars draw live, lines are printed."""
    _state["interactive_logging"] = True


def disable_interactive_logging():
    """Turns interactive logging off: no live bars, lines go to the ``ferrotape`` logger."""
    _state["interactive_logging"] = False


def is_interactive_logging_enabled():
    """Whether interactive logging is on (see the module's doc)."""
    return _state["interactive_logging"]


def print_msg(message, file=None):
    """Prints ``message`` to ``file`` (standard output by default), or logs it at INFO level
    when interactive logging is off."""
    if is_interactive_logging_enabled():
        print(message, file=file, flush=True)
    else:
        _logger.info(message)
