"""From the command line to the run: the entry point, every check before launch, the protocol card."""
