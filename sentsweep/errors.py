"""The one exception type for bad user input, raised before any compute is spent."""


class InputError(ValueError):
    """A user-supplied value (option, file, model, URI) is invalid; the message names the bad value."""
