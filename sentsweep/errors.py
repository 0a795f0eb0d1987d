"""The one exception type for bad user input, raised before any compute is spent."""


class InputError(ValueError):
    """A user-supplied value (option, file, model, URI) is invalid; the message names the bad value. Every check
    of sentsweep's input raises it before anything runs; the command line prints its message as one line
    (`error: ...`) and exits with code 2.

    Examples:
        >>> try:
        ...     sentsweep.run("tsdae_deletion", quick=True, ratios=[-1])
        ... except sentsweep.InputError as error:
        ...     print(error)
        setting noise_ratio=-1.0 is out of range: must be >= 0
    """
